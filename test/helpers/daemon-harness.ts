/**
 * The one fixture of the daemon and reliability tests: runs the real daemon (the built CLI)
 * against a temporary root, on its own tmux server (`tmux -L <unique>`), with the scriptable test
 * agent, and reads what the daemon and its agents leave there. Everything started is cleaned up
 * by pid and socket.
 *
 * A test file calls `const h = useDaemonHarness()`: each test gets a fresh root, and after it
 * every daemon, helper process, agent and tmux server is ended. Tests that run concurrently in one
 * file open their own with `DaemonHarness.open()` and `close()` it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach } from 'vitest';
import {
  checkLiveness,
  readProcessIdentity,
  type ProcessIdentity,
} from '../../src/process/process-identity.js';
import { Children } from '../process/spawned.js';
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

const AGENT_CMD = `${shellQuote(process.execPath)} ${shellQuote(TEST_AGENT)} {file}`;

export interface TestRoot {
  root: string;
  sessions: string;
  socket: string;
  cleanup(): Promise<void>;
}

/** A fresh root, or `at` (a clone that holds its directives/ and sessions/ already). */
async function makeRoot(at?: string): Promise<TestRoot> {
  const root = at ?? (await mkdtemp(join(tmpdir(), 'engine-daemon-')));
  if (at === undefined) {
    await mkdir(join(root, 'directives'));
    await mkdir(join(root, 'sessions'));
    await writeFile(join(root, 'directives', 'TAGS.md'), TEST_TAGS_MD);
  }
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
async function endSessionProcesses(root: string): Promise<void> {
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

/** The arguments that point `engine run` at a test root, its tmux server and the test agent. */
export function rootArgs(t: TestRoot): string[] {
  return ['--root', t.root, '--tmux-socket', t.socket, '--agent-cmd', AGENT_CMD];
}

function startDaemon(
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
      // A test that picks an agent profile runs it instead of the test agent.
      ...(extra.includes('--agent') ? rootArgs(t).slice(0, -2) : rootArgs(t)),
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
    {
      // No desktop or tmux notifications from the tests' daemons unless a test asks for them.
      env: { ...process.env, TMUX: '', TMUX_PANE: '', ENGINE_NOTIFY_VIA: 'none', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
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

export async function waitForReady(d: DaemonProcess, timeoutMs = 20_000): Promise<void> {
  await waitFor(() => d.output().includes('monitoring '), {
    timeoutMs,
    message: () => `daemon ready; output:\n${d.output()}`,
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

function agentStarts(t: TestRoot): AgentStart[] {
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

/**
 * Waits until the text of `file` contains `part` (or passes the test); resolves to that text.
 * A function `message` is called at the deadline: say, the daemon's output so far.
 */
export function waitForText(
  file: string,
  part: string | ((text: string) => boolean),
  options: { timeoutMs?: number; message?: string | (() => string) } = {},
): Promise<string> {
  const holds = typeof part === 'string' ? (text: string) => text.includes(part) : part;
  return waitFor(
    async () => {
      const text = await read(file);
      return holds(text) ? text : null;
    },
    { message: `${file} to contain ${String(part)}`, ...options },
  );
}

/** The tags on the Tags line of a request text. */
export function tagsOf(text: string): string[] {
  const line = text.split('\n').find((l) => l.startsWith('**Tags**:')) ?? '';
  // Whole tags (docs/TAGS.md): the longest run of name characters after a '#' not glued to a word.
  return (
    line.slice('**Tags**:'.length).match(/(?<![\p{L}\p{N}_/&#-])#[A-Za-z0-9][A-Za-z0-9-]*/gu) ?? []
  );
}

export const recoveries = (text: string): number =>
  text.split('\n').filter((l) => l === '## Recovery').length;

/** Waits until the file's Tags line has one of the tags; resolves to the text. */
export function waitForTag(file: string, tags: string[], timeoutMs = 20_000): Promise<string> {
  return waitForText(file, (text) => tagsOf(text).some((t) => tags.includes(t)), {
    timeoutMs,
    message: `${file} to carry ${tags.join(' or ')}`,
  });
}

/** Lifecycle events of the daemon's event log. */
export interface EngineEvent {
  event: string;
  time: string;
  file?: string;
  noun?: string;
  session?: string;
  reason?: string;
  /** `agent-closing`: ask, SIGTERM or SIGKILL. */
  step?: string;
  [key: string]: unknown;
}

export function events(root: string): EngineEvent[] {
  const path = join(root, 'sessions', '.engine', 'events.jsonl');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as EngineEvent);
}

/** The fields of a session's `.state.json` the tests look at; the rest are there too. */
export interface StateRecord {
  status: string;
  pid: number | null;
  agentPid: number | null;
  exitCode: number | null;
  requestFile: string;
  reason: string | null;
  tmux: { pane: string } | null;
  [field: string]: unknown;
}

export async function stateOf(sessionDir: string): Promise<StateRecord> {
  return JSON.parse(await read(join(sessionDir, '.state.json'))) as StateRecord;
}

/** Waits until the session's record passes the test; resolves to the record. */
export function waitForState(
  sessionDir: string,
  holds: (state: StateRecord) => unknown,
  message: string | (() => string) = `the record of ${sessionDir}`,
): Promise<StateRecord> {
  return waitFor(
    async () => {
      const state = await stateOf(sessionDir);
      return holds(state) ? state : null;
    },
    { message },
  );
}

/**
 * Alive as the daemon judges it: a zombie is dead. (An agent whose wrapper was killed too is
 * reparented, and may stay a zombie for a while; kill(pid, 0) still answers for it.)
 */
export function isAlive(pid: number): boolean {
  const identity = readProcessIdentity(pid);
  return identity !== null && checkLiveness(identity) === 'alive';
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

/** One temp root with its daemons and helper processes; `close()` ends all of it. */
export class DaemonHarness {
  readonly daemons: DaemonProcess[] = [];
  private t: TestRoot | undefined;
  /** Helper processes of the test, killed by `close()`. */
  readonly children = new Children();
  private readonly strays: ProcessIdentity[] = [];

  /** `flags` go before each daemon's own: the intervals a whole file runs with. */
  constructor(private readonly flags: string[] = []) {}

  /** A harness on a fresh root (or on `at`), for a test that closes it itself. */
  static async open(flags: string[] = [], at?: string): Promise<DaemonHarness> {
    const h = new DaemonHarness(flags);
    await h.setUp(at);
    return h;
  }

  async setUp(at?: string): Promise<void> {
    this.t = await makeRoot(at);
  }

  get testRoot(): TestRoot {
    if (!this.t) throw new Error('the daemon harness has no root: call setUp() first');
    return this.t;
  }

  get root(): string {
    return this.testRoot.root;
  }

  get sessions(): string {
    return this.testRoot.sessions;
  }

  get socket(): string {
    return this.testRoot.socket;
  }

  /** A path in the watched sessions/ directory. */
  file(...path: string[]): string {
    return join(this.sessions, ...path);
  }

  /** Writes a request file in sessions/; resolves to its path. */
  async request(name: string, text: string): Promise<string> {
    const file = this.file(name);
    await writeFile(file, text);
    return file;
  }

  start(extra: string[] = [], env: Record<string, string> = {}): DaemonProcess {
    const d = startDaemon(this.testRoot, [...this.flags, ...extra], env);
    this.daemons.push(d);
    return d;
  }

  /** Runs `--once` and resolves to its exit code and output. */
  async once(
    extra: string[] = [],
    env: Record<string, string> = {},
  ): Promise<{ code: number | null; output: string }> {
    const d = this.start(['--once', ...extra], env);
    const code = await d.exited;
    return { code, output: d.output() };
  }

  agents(): AgentStart[] {
    return agentStarts(this.testRoot);
  }

  /** Waits until exactly `count` agents have started; resolves to them. */
  waitForAgents(count: number): Promise<AgentStart[]> {
    return waitFor(() => this.agents().length === count && this.agents(), {
      message: `${count} agent start(s)`,
    });
  }

  /** A process the daemon started that a failed test must not leave running: killed at the end. */
  killAtEnd(...pids: number[]): void {
    for (const pid of pids) {
      const identity = readProcessIdentity(pid);
      if (identity) this.strays.push(identity);
    }
  }

  /**
   * Kills every daemon and helper, every process passed to `killAtEnd` that is still the same
   * process, then every agent and wrapper of the root (by pid), and the tmux server.
   */
  async close(): Promise<void> {
    for (const d of this.daemons.splice(0))
      if (d.child.exitCode === null && d.child.signalCode === null) await d.kill9();
    await this.children.killAll();
    for (const stray of this.strays.splice(0))
      if (readProcessIdentity(stray.pid)?.startTicks === stray.startTicks) {
        try {
          process.kill(stray.pid, 'SIGKILL');
        } catch {
          // ended meanwhile
        }
      }
    await this.t?.cleanup();
    this.t = undefined;
  }
}

/** A fresh root for each test of the file (or describe block), closed after the test. */
export function useDaemonHarness(flags: string[] = []): DaemonHarness {
  const h = new DaemonHarness(flags);
  beforeEach(() => h.setUp());
  afterEach(() => h.close());
  return h;
}
