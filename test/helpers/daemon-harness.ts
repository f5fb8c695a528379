/**
 * Runs the real daemon (the built CLI) against a temporary root, on its own tmux server
 * (`tmux -L <unique>`), with the scriptable test agent. Everything started is cleaned up by pid
 * and socket.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { killProcessesWithEnv } from './process-env.js';
import { CLI } from './run-cli.js';
import { waitFor } from './wait-for.js';

export const TEST_AGENT = fileURLToPath(new URL('../fixtures/test-agent.mjs', import.meta.url));

export const TEST_TAGS_MD = `# Tags

## §TAG_DISPATCH

| Tag | Skill | Mode | Priority | Daemon |
|-----|-------|------|----------|--------|
| \`#delegated-fix\` | \`/fix\` | agent | 3 | yes |
| \`#delegated-implementation\` | \`/implement\` | agent | 4 | yes |
| \`#delegated-loop\` | \`/loop\` | agent | 4.5 | yes |
| \`#delegated-chores\` | \`/chores\` | agent | 5 | yes |
| \`#delegated-manual\` | \`/manual\` | interactive | 6 | no |
`;

export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export const AGENT_CMD = `${shellQuote(process.execPath)} ${shellQuote(TEST_AGENT)} {file}`;

export interface TestRoot {
  root: string;
  sessions: string;
  socket: string;
  cleanup(): Promise<void>;
}

export async function makeRoot(): Promise<TestRoot> {
  const root = await mkdtemp(join(tmpdir(), 'engine-daemon-'));
  await mkdir(join(root, 'directives'));
  await mkdir(join(root, 'sessions'));
  await writeFile(join(root, 'directives', 'TAGS.md'), TEST_TAGS_MD);
  const socket = `engine-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  return {
    root,
    sessions: join(root, 'sessions'),
    socket,
    cleanup: async () => {
      await endSessionProcesses(root);
      killTmuxServer(socket);
      await rm(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    },
  };
}

/**
 * Kills, by pid, every process of the sessions under `root`: wrappers, their heartbeat loops and
 * agents, each found by the ENGINE_ROOT the daemon put in its environment. Killing the tmux server
 * is not enough: a wrapper traps the hang-up and waits for its agent, and a held agent waits for
 * a release file that is never written. Call it once the root's daemons are dead, so that none
 * starts another; it scans again until none is left (a heartbeat loop may fork as it is killed).
 */
export async function endSessionProcesses(root: string): Promise<void> {
  const real = existsSync(root) ? realpathSync(root) : root;
  const entries = [...new Set([root, real])].map((r) => `ENGINE_ROOT=${r}`);
  await waitFor(() => killProcessesWithEnv(...entries).length === 0, {
    timeoutMs: 10_000,
    message: `the session processes of ${root} to end`,
  });
}

export function killTmuxServer(socket: string): void {
  try {
    execFileSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
  } catch {
    // no server was started
  }
  const uid = process.getuid?.() ?? 0;
  rmSync(join(process.env.TMUX_TMPDIR ?? '/tmp', `tmux-${uid}`, socket), { force: true });
}

export interface DaemonProcess {
  child: ChildProcess;
  output(): string;
  /** SIGTERM, then wait for exit. */
  stop(): Promise<number | null>;
  kill9(): Promise<void>;
  exited: Promise<number | null>;
}

export function startDaemon(
  t: TestRoot,
  extra: string[] = [],
  env: Record<string, string> = {},
): DaemonProcess {
  const child = spawn(
    process.execPath,
    [
      CLI,
      'run',
      ...(extra.some((a) => a.startsWith('--monitor-tags')) ? [] : ['--monitor-tags']),
      '--root',
      t.root,
      '--tmux-socket',
      t.socket,
      '--agent-cmd',
      AGENT_CMD,
      '--debounce-ms',
      '300',
      '--reap-interval-ms',
      '500',
      '--poll-ms',
      '100',
      '--heartbeat-ms',
      '500',
      '--verbose',
      ...extra,
    ],
    { env: { ...process.env, TMUX: '', TMUX_PANE: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exited,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
    kill9: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

export async function waitForReady(d: DaemonProcess): Promise<void> {
  await waitFor(() => d.output().includes('monitoring '), {
    message: `daemon ready; output:\n${d.output()}`,
  });
}

export interface AgentStart {
  file: string;
  noun: string;
  pid: number;
  argv: string[];
  attempt: string;
  prior: string;
  session: string;
  time: number;
}

export function agentStarts(t: TestRoot): AgentStart[] {
  const path = join(t.root, 'agents.jsonl');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AgentStart);
}

export async function read(path: string): Promise<string> {
  return readFile(path, 'utf8');
}

export function tmuxWindows(socket: string): string[] {
  try {
    return execFileSync('tmux', ['-L', socket, 'list-windows', '-a', '-F', '#{window_name}'], {
      encoding: 'utf8',
    })
      .split('\n')
      .filter(Boolean);
  } catch {
    return [];
  }
}

export async function release(sessionDir: string): Promise<void> {
  await writeFile(join(sessionDir, 'release'), 'go');
}
