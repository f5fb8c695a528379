/**
 * The Claude profiles end to end through the real daemon, with a fake `claude`: a node script
 * that records its argv and PATH, prints a first line, and marks the item done with
 * `engine tag swap "$ENGINE_REQUEST_FILE" '#claimed-fix' '#done-fix'` through the `engine` it
 * finds on its PATH. (The real Claude Code CLI is tested elsewhere.)
 */
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  release,
  stateOf,
  useDaemonHarness,
  waitForReady,
  waitForTag,
  waitForText,
} from '../helpers/daemon-harness.js';
import { CLI, runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const FIRST_LINE = 'fake claude: first line';

const FAKE_CLAUDE = `#!${process.execPath}
const { execSync } = require('node:child_process');
const { existsSync, watch, writeFileSync } = require('node:fs');
process.stdout.write(${JSON.stringify(`${FIRST_LINE}\n`)});
const env = process.env;
writeFileSync(env.ENGINE_SESSION_DIR + '/fake-claude.json', JSON.stringify({ argv: process.argv.slice(2), path: env.PATH }));
const finish = () => {
  execSync(\`engine tag swap "$ENGINE_REQUEST_FILE" '#claimed-fix' '#done-fix'\`, { stdio: 'inherit' });
  process.stdout.write('fake claude: done\\n');
};
if (env.FAKE_CLAUDE_HOLD !== '1') finish();
else {
  const go = env.ENGINE_SESSION_DIR + '/release';
  const watcher = watch(env.ENGINE_SESSION_DIR, () => existsSync(go) && (watcher.close(), finish()));
  if (existsSync(go)) (watcher.close(), finish());
}
`;

interface Recorded {
  argv: string[];
  path: string;
}

describe('the claude and claude-print profiles', () => {
  const h = useDaemonHarness();
  let bin: string;
  beforeEach(async () => {
    bin = await mkdtemp(join(tmpdir(), 'engine-fake-claude-'));
    await writeFile(join(bin, 'claude'), FAKE_CLAUDE);
    await chmod(join(bin, 'claude'), 0o755);
  });
  afterEach(async () => {
    await rm(bin, { recursive: true, force: true });
  });

  const onPath = (): Record<string, string> => ({ PATH: `${bin}:${process.env.PATH ?? ''}` });

  async function sessionOf(file: string): Promise<string> {
    const text = await waitForText(file, '**Session**: ');
    return join(h.root, /\*\*Session\*\*: (\S+)/.exec(text)?.[1] ?? '');
  }

  it.each([
    ['claude-print', ['-p', '--output-format', 'stream-json', '--verbose']],
    ['claude', []],
  ])(
    '%s: runs claude with a fresh --session-id it records, engine on its PATH, and its output in agent.log',
    async (profile, leading) => {
      const d = h.start(['--agent', profile], onPath());
      await waitForReady(d);
      const file = await h.request('REQ.md', '# R\n**Tags**: #delegated-fix\n');
      await waitForTag(file, ['#done-fix']);
      const session = await sessionOf(file);
      const state = await stateOf(session);
      expect(state.agentSessionId).toMatch(UUID);
      const seen = JSON.parse(
        await readFile(join(session, 'fake-claude.json'), 'utf8'),
      ) as Recorded;
      expect(seen.argv.slice(0, leading.length)).toEqual(leading);
      const at = seen.argv.indexOf('--session-id');
      expect(seen.argv[at + 1]).toBe(state.agentSessionId);
      expect(seen.argv.slice(-2)).toEqual(['--', `/fix ${file}`]);
      expect(seen.path.split(':')[0]).toBe(join(h.root, 'sessions', '.engine', 'bin'));

      const status = await runCli(['status', '--json', '--root', h.root]);
      const report = JSON.parse(status.stdout) as {
        done: Array<{ event: string; session?: string; agentSessionId: string | null }>;
      };
      const done = report.done.find((e) => e.event === 'done');
      expect(done?.session).toBe(session.slice(h.root.length + 1));
      expect(done?.agentSessionId).toBe(state.agentSessionId);

      const logs = await waitFor(
        async () => {
          const result = await runCli(['logs', '--raw', file, '--root', h.root]);
          return result.stdout.includes('fake claude: done') && result;
        },
        { message: 'engine logs to print the whole transcript' },
      );
      expect(logs.code).toBe(0);
      expect(logs.stdout.startsWith(`${FIRST_LINE}\r\n`)).toBe(true);
      // As text: a line that is not stream-json is shown as it is, in either profile.
      const text = await runCli(['logs', file, '--root', h.root]);
      expect(text.stdout.startsWith(`${FIRST_LINE}\n`)).toBe(true);
      expect(text.stdout).toContain('fake claude: done\n');
    },
  );

  it('shows the running agent session in engine status; logs --follow ends when the session ends', async () => {
    const d = h.start(['--agent', 'claude-print', '--claude-bin', join(bin, 'claude')], {
      FAKE_CLAUDE_HOLD: '1',
    });
    await waitForReady(d);
    const file = await h.request('REQ.md', '# R\n**Tags**: #delegated-fix\n');
    const session = await sessionOf(file);
    const state = await waitFor(async () => {
      const s = await stateOf(session).catch(() => null);
      return s?.agentSessionId ? s : null;
    });

    const status = await runCli(['status', '--json', '--root', h.root]);
    const running = (JSON.parse(status.stdout) as { running: Array<{ agentSessionId: string }> })
      .running;
    expect(running.map((c) => c.agentSessionId)).toEqual([state.agentSessionId]);
    const text = await runCli(['status', '--root', h.root]);
    expect(text.stdout).toContain(`agent session ${String(state.agentSessionId)}`);

    const follow = h.children.track(
      spawn(process.execPath, [CLI, 'logs', '--follow', session], {
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let out = '';
    follow.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    await waitFor(() => out.includes(FIRST_LINE), { message: () => `the first line; got ${out}` });
    expect(follow.exitCode).toBeNull();

    await release(session);
    await waitForTag(file, ['#done-fix']);
    await waitFor(() => follow.exitCode !== null, {
      message: () => `engine logs --follow to end with the session; got ${out}`,
    });
    expect(follow.exitCode).toBe(0);
    expect(out).toContain('fake claude: done');
  });

  it('refuses to start when it cannot find claude, and with --agent-cmd beside --agent claude', async () => {
    const missing = h.start(['--agent', 'claude'], { ENGINE_CLAUDE_BIN: join(bin, 'no-claude') });
    expect(await missing.exited).toBe(1);
    expect(missing.output()).toContain(
      `ERROR: Claude Code ('${join(bin, 'no-claude')}') is not on PATH`,
    );

    const both = await runCli(
      [
        'run',
        '--monitor-tags',
        '--root',
        h.root,
        '--agent',
        'claude',
        '--agent-cmd',
        'x',
        '--dry-run',
      ],
      { env: { ...process.env, ...onPath() } },
    );
    expect(both.code).toBe(1);
    expect(both.stderr).toMatch(
      /--agent claude and an agent command \(--agent-cmd.*exclude each other/,
    );
  });

  it('custom: {agent_session} and {prior_agent_session}; engine logs of a requeued request shows its last attempt', async () => {
    const template = `/bin/sh -c 'echo "run $1 prior=$2"; exit 3' sh {agent_session} '{prior_agent_session}'`;
    const d = h.start(['--agent', 'custom', '--agent-cmd', template]);
    await waitForReady(d);
    const file = await h.request('REQ.md', '# R\n**Tags**: #delegated-fix\n');
    const priors = async (count: number): Promise<string[]> => {
      const text = await waitForText(
        file,
        (t) =>
          (t.match(/\*\*Prior Session\*\*: /g) ?? []).length === count && t.includes('#needs-fix'),
      );
      return [...text.matchAll(/\*\*Prior Session\*\*: (\S+)/g)].map((m) =>
        join(h.root, m[1] ?? ''),
      );
    };
    const [first] = await priors(1);
    const firstId = (await stateOf(first ?? '')).agentSessionId;
    expect(firstId).toMatch(UUID);

    expect((await runCli(['tag', 'swap', file, '#needs-fix', '#delegated-fix'])).code).toBe(0);
    const second = (await priors(2))[1] ?? '';
    const state = await stateOf(second);
    expect(state.agentSessionId).toMatch(UUID);
    expect(state.agentSessionId).not.toBe(firstId);
    expect((state.agentArgv as string[]).slice(-2)).toEqual([state.agentSessionId, firstId]);

    const logs = await waitFor(async () => {
      const result = await runCli(['logs', file, '--root', h.root]);
      return result.stdout.includes('prior=') && result;
    });
    expect(logs.stdout).toBe(`run ${String(state.agentSessionId)} prior=${String(firstId)}\n`);
  });
});
