/**
 * Runs agents under node-pty inside the daemon (`--runner pty`). node-pty is an optional dependency
 * (it has no Linux prebuild and needs a compiler): it is loaded with `import()` on first use, and a
 * missing module gives an `EngineError` that says what to do.
 *
 * node-pty execs the argument vector directly (fork + execvp, no shell), so the pid is the agent's.
 * Targets are `pty:<pid>`. Each transcript (everything the agent writes to its terminal, with ANSI
 * codes) is appended to `logFile` when one is given; a target reads as dead only once its exit was
 * seen AND its transcript was flushed and closed.
 *
 * Lifetime: the agents are children of this process and hold ptys whose other ends it keeps.
 * `close()` kills nothing: it only refuses further launches. Agents still running keep this
 * process's event loop alive; when the process exits the kernel hangs up their terminals (SIGHUP),
 * so agents started this way end with the daemon (docs/DAEMON.md). Use `stop()` to end one now.
 */
import { open } from 'node:fs/promises';
import type { WriteStream } from 'node:fs';
import { finished } from 'node:stream';
import { EngineError } from '../errors.js';
import {
  AGENT_TERMINAL,
  agentEnv,
  checkLaunch,
  sanitizeWindowName,
  uniqueWindowName,
  type AgentLaunch,
  type LaunchedAgent,
  type Runner,
} from './runner.js';

/** The part of node-pty's `IPty` this runner uses (declared here: node-pty may not be installed). */
export interface PtyProcess {
  readonly pid: number;
  onData(listener: (data: string) => void): unknown;
  onExit(listener: (event: { exitCode: number; signal?: number }) => void): unknown;
  kill(signal?: string): void;
}

/** The part of the node-pty module this runner uses. */
export interface PtyModule {
  spawn(
    file: string,
    args: string[],
    options: { name: string; cols: number; rows: number; cwd: string; env: Record<string, string> },
  ): PtyProcess;
}

/** Imports node-pty (or a stand-in); injectable so that tests can simulate a missing module. */
export type PtyLoader = () => Promise<unknown>;

export interface PtyRunnerOptions {
  loadPty?: PtyLoader;
  /** How long `stop` waits after SIGHUP before SIGKILL, and after SIGKILL before giving up. */
  stopGraceMs?: number;
}

export const NODE_PTY_MISSING =
  'node-pty is not installed: run `npm install node-pty` or use --runner tmux';

// A variable, not a literal, so the type checker does not require node-pty to be installed.
const NODE_PTY = 'node-pty';
const defaultLoader: PtyLoader = () => import(NODE_PTY);

/** Loads node-pty. Throws `EngineError` when it is missing or cannot load (e.g. not compiled). */
export async function loadNodePty(loader: PtyLoader = defaultLoader): Promise<PtyModule> {
  let loaded: unknown;
  try {
    loaded = await loader();
  } catch (error) {
    if (isModuleNotFound(error)) throw new EngineError(NODE_PTY_MISSING, { cause: error });
    const reason = error instanceof Error ? error.message : String(error);
    throw new EngineError(
      `node-pty could not be loaded (${reason}): reinstall it with \`npm install node-pty\` or use --runner tmux`,
      { cause: error },
    );
  }
  const candidates = [loaded, (loaded as { default?: unknown } | null)?.default];
  for (const candidate of candidates) {
    if (typeof (candidate as Partial<PtyModule> | null)?.spawn === 'function') {
      return candidate as PtyModule;
    }
  }
  throw new EngineError('node-pty loaded but has no spawn(): reinstall it or use --runner tmux');
}

interface Agent {
  readonly pty: PtyProcess;
  readonly windowName: string;
  /** Settles once the process exited and its transcript is closed. */
  readonly exited: Promise<void>;
}

export class PtyRunner implements Runner {
  readonly kind = 'pty' as const;
  private readonly loadPty: PtyLoader;
  private readonly stopGraceMs: number;
  private module: Promise<PtyModule> | undefined;
  private readonly agents = new Map<string, Agent>();
  private closed = false;

  constructor(options: PtyRunnerOptions = {}) {
    this.loadPty = options.loadPty ?? defaultLoader;
    this.stopGraceMs = options.stopGraceMs ?? 3000;
  }

  /** Loads node-pty now, so that a missing module is reported before any work is claimed. */
  async ensureLoaded(): Promise<void> {
    await this.ptyModule();
  }

  async launch(spec: AgentLaunch): Promise<LaunchedAgent> {
    if (this.closed) throw new EngineError('the pty runner is closed');
    const pty = await this.ptyModule();
    const checked = await checkLaunch(spec);
    const [program, ...args] = checked.argv;

    const transcript =
      checked.logFile === undefined ? undefined : await openTranscript(checked.logFile);
    // Exactly the launch's environment; node-pty adds the terminal's TERM and the cwd's PWD.
    const env = agentEnv(checked.env);
    let child: PtyProcess;
    try {
      child = pty.spawn(program, args, {
        name: 'xterm-256color',
        cols: AGENT_TERMINAL.cols,
        rows: AGENT_TERMINAL.rows,
        cwd: checked.cwd,
        env,
      });
    } catch (error) {
      transcript?.destroy();
      const reason = error instanceof Error ? error.message : String(error);
      throw new EngineError(`cannot start ${JSON.stringify(program)} under node-pty: ${reason}`, {
        cause: error,
      });
    }

    const target = `pty:${child.pid}`;
    const taken = [...this.agents.values()].map((agent) => agent.windowName);
    const windowName = uniqueWindowName(sanitizeWindowName(checked.name), taken);
    if (transcript) child.onData((data) => transcript.write(data));
    const exited = new Promise<void>((resolve) => {
      child.onExit(() => {
        // node-pty reports the exit only after the pty has been read to the end, so the transcript
        // is complete here. The target stays "alive" until the file is closed.
        const done = (): void => {
          this.agents.delete(target);
          resolve();
        };
        if (transcript) {
          // Called on finish, on error and on premature close alike: never leaves the target hanging.
          finished(transcript, done);
          transcript.end();
        } else {
          done();
        }
      });
    });
    this.agents.set(target, { pty: child, windowName, exited });
    return { kind: 'pty', target, windowName, pid: child.pid };
  }

  async isTargetAlive(target: string): Promise<boolean> {
    parseTarget(target);
    // Unknown targets were not started by this runner (or have finished): a pty agent of an
    // earlier daemon ended with it.
    return this.agents.has(target);
  }

  async stop(target: string): Promise<void> {
    parseTarget(target);
    const agent = this.agents.get(target);
    if (!agent) return;
    agent.pty.kill('SIGHUP');
    if (await settlesWithin(agent.exited, this.stopGraceMs)) return;
    agent.pty.kill('SIGKILL');
    if (await settlesWithin(agent.exited, this.stopGraceMs)) return;
    throw new EngineError(`${target} did not exit after SIGKILL`);
  }

  /** Refuses further launches; kills nothing (see the module comment). */
  async close(): Promise<void> {
    this.closed = true;
  }

  private ptyModule(): Promise<PtyModule> {
    if (!this.module) {
      const loading = loadNodePty(this.loadPty);
      // A failed load is not cached: installing node-pty then retrying works without a restart.
      loading.catch(() => {
        if (this.module === loading) this.module = undefined;
      });
      this.module = loading;
    }
    return this.module;
  }
}

function parseTarget(target: string): number {
  const match = /^pty:(\d+)$/.exec(target);
  if (!match?.[1])
    throw new EngineError(`not a pty target: ${JSON.stringify(target)} (expected pty:PID)`);
  return Number(match[1]);
}

/** Opens `file` for appending; a write error later is swallowed so it cannot crash the daemon. */
async function openTranscript(file: string): Promise<WriteStream> {
  let handle;
  try {
    handle = await open(file, 'a');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new EngineError(`cannot open the transcript ${file}: ${reason}`, { cause: error });
  }
  const stream = handle.createWriteStream();
  // Losing the rest of a transcript (disk full, ...) must not take the daemon down with it.
  stream.on('error', () => undefined);
  return stream;
}

async function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function isModuleNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  // Only node-pty itself missing; a missing file inside it (say, its native binding) is "broken".
  return error instanceof Error && /['"]node-pty['"]/.test(error.message);
}
