/**
 * The agent's environment (docs/DAEMON.md): an agent runs with the daemon's environment as it is
 * when the daemon runs, plus engine's variables, on both runners; never the stale environment of a
 * tmux server that started earlier. The agent here writes its whole environment to its session.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { loadNodePty } from '../../src/runners/pty-runner.js';
import {
  rootArgs,
  shellQuote,
  tagsOf,
  useDaemonHarness,
  waitForState,
  waitForTag,
  type StateRecord,
} from '../helpers/daemon-harness.js';
import { CLI } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

const h = useDaemonHarness();
const ptyLoads = await loadNodePty().then(
  () => true,
  () => false,
);

/** The agent: writes its environment (JSON) to `env.json` in its session, then marks done. */
async function envAgent(): Promise<string[]> {
  const script = join(h.root, 'env-agent.cjs');
  await writeFile(
    script,
    [
      `const { execFileSync } = require('node:child_process');`,
      `const { writeFileSync } = require('node:fs');`,
      `const env = process.env;`,
      `writeFileSync(env.ENGINE_SESSION_DIR + '/env.json', JSON.stringify(env));`,
      `execFileSync(process.execPath, [${JSON.stringify(CLI)}, 'tag', 'swap', env.ENGINE_REQUEST_FILE, '#claimed-fix', '#done-fix']);`,
      '',
    ].join('\n'),
  );
  await chmod(script, 0o755);
  return ['--agent-cmd', `${shellQuote(process.execPath)} ${shellQuote(script)}`];
}

/** A value no shell may run or change: newlines, quotes, `$(...)`, backquotes, tmux formats. */
function hostile(): string {
  const pwned = join(h.root, 'pwned');
  return `line 1\nline 2 'single' "double" \\ $(touch ${pwned}-subst) \`touch ${pwned}-tick\` #(touch ${pwned}-job) #{pane_id} ü;`;
}

async function runOnce(
  runner: 'tmux' | 'pty',
): Promise<{ env: Record<string, string>; state: StateRecord }> {
  const file = await h.request('REQ.md', '# R\n**Tags**: #delegated-fix\n');
  const secret = hostile();
  const d = h.start(['--runner', runner, ...(await envAgent())], {
    VAR: 'new',
    FOO: 'x',
    HOSTILE: secret,
    // The daemon's own terminal: the agent's terminal is another one.
    TERM_PROGRAM: 'the-daemons-terminal',
    COLUMNS: '13',
  });
  const text = await waitForTag(file, ['#done-fix', '#needs-fix'], 30_000);
  expect(tagsOf(text), d.output()).toEqual(['#done-fix']);
  const session = join(h.root, /^\*\*Session\*\*: (\S+)$/m.exec(text)![1]!);
  const state = await waitForState(session, (s) => s.status === 'exited');
  const env = JSON.parse(await readFile(join(session, 'env.json'), 'utf8')) as Record<
    string,
    string
  >;
  expect(env.HOSTILE).toBe(secret);
  expect(readdirSync(h.root).filter((name) => name.startsWith('pwned'))).toEqual([]);
  // Nothing but the agent's own file holds a value: the environment is never written in the tree.
  for (const name of readdirSync(session).filter((n) => n !== 'env.json'))
    expect(readFileSync(join(session, name), 'utf8'), name).not.toContain('line 2');
  expect(env.ENGINE_SESSION_DIR).toBe(session);
  expect(env.ENGINE_REQUEST_FILE).toBe(file);
  expect(env.PWD).toBe(state.cwd);
  expect(env.COLUMNS).toBeUndefined();
  return { env, state };
}

it("gives a tmux agent the daemon's environment, not the one its tmux server started with", async () => {
  // The user's tmux server started long ago: VAR had another value, STALE was set.
  const base: NodeJS.ProcessEnv = { ...process.env, VAR: 'old', STALE: '1' };
  delete base.TMUX;
  delete base.TMUX_PANE;
  execFileSync('tmux', ['-L', h.socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'user'], {
    env: base,
  });
  expect(process.env.STALE).toBeUndefined();
  const { env, state } = await runOnce('tmux');
  expect(env.VAR).toBe('new');
  expect(env.FOO).toBe('x');
  expect(env.STALE).toBeUndefined();
  expect(env.TMUX_PANE).toBe(state.tmux?.pane);
  expect(env.TERM_PROGRAM).toBe('tmux');
});

it.runIf(ptyLoads)("gives a pty agent the daemon's environment", async () => {
  const { env } = await runOnce('pty');
  expect(env.VAR).toBe('new');
  expect(env.FOO).toBe('x');
  expect(env.TMUX).toBeUndefined();
  expect(env.TERM_PROGRAM).toBeUndefined();
  expect(env.TERM).toBe('xterm-256color');
});

/**
 * The daemon started as `engine run` (the launcher, scripts/bundle-lean.mjs): with
 * MALLOC_ARENA_MAX=2 for itself where the user set none, and its agent without it; a value the
 * user set is the agent's too.
 */
async function launchedAgentEnv(user: Record<string, string>): Promise<{
  daemon: Record<string, string>;
  agent: Record<string, string>;
}> {
  const file = await h.request(
    `L${Object.keys(user).length}.md`,
    '# R\n**Tags**: #delegated-fix\n',
  );
  const env: NodeJS.ProcessEnv = { ...process.env, TMUX: '', TMUX_PANE: '' };
  delete env.MALLOC_ARENA_MAX;
  delete env.ENGINE_LAUNCHER_ARENA;
  Object.assign(env, user, { ENGINE_NOTIFY_VIA: 'none' });
  const args = [...rootArgs(h.testRoot).slice(0, -2), ...(await envAgent())];
  const daemon = h.children.track(
    spawn(CLI, ['run', '--monitor-tags', ...args, '--debounce-ms', '300'], {
      env,
      stdio: 'ignore',
    }),
  );
  // sh runs node in its place: the daemon keeps the pid, and /proc shows what it started with.
  const environ = await waitFor(
    () =>
      readFileSync(`/proc/${daemon.pid}/cmdline`, 'utf8').startsWith('node\0') &&
      readFileSync(`/proc/${daemon.pid}/environ`, 'utf8'),
  );
  const text = await waitForTag(file, ['#done-fix', '#needs-fix'], 30_000);
  expect(tagsOf(text)).toEqual(['#done-fix']);
  const session = join(h.root, /^\*\*Session\*\*: (\S+)$/m.exec(text)![1]!);
  await waitForState(session, (s) => s.status === 'exited');
  daemon.kill('SIGTERM');
  const pairs = (list: string[]) =>
    Object.fromEntries(
      list.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    );
  return {
    daemon: pairs(environ.split('\0').filter(Boolean)),
    agent: JSON.parse(await readFile(join(session, 'env.json'), 'utf8')) as Record<string, string>,
  };
}

it('runs `engine run` with MALLOC_ARENA_MAX=2 for the daemon alone, never for its agent', async () => {
  const { daemon, agent } = await launchedAgentEnv({});
  expect(daemon.MALLOC_ARENA_MAX).toBe('2');
  expect(agent.MALLOC_ARENA_MAX).toBeUndefined();
  expect(agent.ENGINE_LAUNCHER_ARENA).toBeUndefined();
});

it("keeps the user's MALLOC_ARENA_MAX, for the daemon and its agent", async () => {
  const { daemon, agent } = await launchedAgentEnv({ MALLOC_ARENA_MAX: '4' });
  expect(daemon.MALLOC_ARENA_MAX).toBe('4');
  expect(agent.MALLOC_ARENA_MAX).toBe('4');
  expect(daemon.ENGINE_LAUNCHER_ARENA).toBeUndefined();
});
