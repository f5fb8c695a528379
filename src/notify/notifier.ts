/**
 * Runs the notifications of recorded events: the `--on-event` command, `notify-send` and a tmux
 * `display-message` on the daemon's tmux server. Each is an argument vector run with spawn, never
 * through a shell. Fire and forget: a running daemon never waits for one (a stop waits for those
 * under way), a failure is logged, and a command that runs past its time limit is killed with its
 * process group and logged. A few run at once; the rest wait their turn, so a burst of events
 * cannot start hundreds of processes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import PQueue from 'p-queue';
import { findProgram } from '../dispatch/agent-command.js';
import { messageOf } from '../errors.js';
import type { EventInput } from '../sessions/event-log.js';
import { describeEvent, notifies, notifyArgv, tmuxLiteral } from './notify-event.js';
import type { NotifyChannel } from './notify-event.js';

/** How long one notification command may run. */
export const NOTIFY_TIMEOUT_MS = 10_000;
const AT_ONCE = 4;
/** Of a failed command's stderr, what the log line quotes. */
const STDERR_KEPT = 500;

type NotifyLog = (level: 'warn' | 'debug', message: string) => void;

export interface NotifierOptions {
  root: string;
  /** The `--on-event` template, split; null: no command. */
  command: string[] | null;
  via: NotifyChannel[];
  /** The tmux server the agents run on (`-L` name; null: the default server); undefined: none. */
  tmuxSocket: string | null | undefined;
  log: NotifyLog;
  timeoutMs?: number;
}

export class Notifier {
  private readonly queue = new PQueue({ concurrency: AT_ONCE });
  private readonly notifySend: string | null;
  /** Commands whose failure was logged as a warning; a built-in channel's next ones are debug lines. */
  private readonly warned = new Set<string>();

  constructor(private readonly options: NotifierOptions) {
    this.notifySend = options.via.includes('desktop') ? findProgram('notify-send') : null;
    if (options.via.includes('desktop') && !this.notifySend)
      options.log('debug', 'notify-send is not on PATH: no desktop notifications');
  }

  /** Notifies of `event` if it is one that notifies; returns at once. */
  notify(event: EventInput & { time?: string }): void {
    if (!notifies(event)) return;
    const { command, via, root, tmuxSocket, log } = this.options;
    // The caller records an event: nothing here may throw into it.
    try {
      if (command) this.enqueue(notifyArgv(command, event), 'the notification command', false);
      const text = describeEvent(event, root);
      if (this.notifySend)
        this.enqueue([this.notifySend, '--app-name=engine', '--', text], 'notify-send', true);
      if (via.includes('tmux') && tmuxSocket !== undefined)
        void this.queue.add(() => this.tmuxMessage(tmuxSocket, text));
    } catch (error) {
      log('warn', `notification of ${event.event}: ${messageOf(error)}`);
    }
  }

  /** Resolves once every notification under way or waiting has ended (each within its limit). */
  async close(): Promise<void> {
    await this.queue.onIdle();
  }

  /** A built-in channel is on by default: where it cannot work (no desktop), it warns once. */
  private enqueue(argv: string[], what: string, builtIn: boolean): void {
    void this.queue.add(() => this.run(argv, what, { quiet: builtIn && this.warned.has(what) }));
  }

  /** Shown to every client attached to the agents' server; none attached: nothing to show. */
  private async tmuxMessage(socket: string | null, text: string): Promise<void> {
    const server = socket === null ? [] : ['-L', socket];
    // No server (every agent window closed): nobody to show it to, nothing to warn about.
    const clients = await this.run(
      ['tmux', ...server, 'list-clients', '-F', '#{client_name}'],
      'tmux list-clients',
      { output: true, quiet: true },
    );
    for (const client of clients.split('\n').filter(Boolean))
      await this.run(
        ['tmux', ...server, 'display-message', '-c', client, '--', tmuxLiteral(text)],
        'tmux display-message',
        { quiet: this.warned.has('tmux display-message') },
      );
  }

  /** Runs `argv`; resolves with its stdout when `output` is asked for. Never rejects. */
  private run(
    argv: string[],
    what: string,
    { output = false, quiet = false }: { output?: boolean; quiet?: boolean } = {},
  ): Promise<string> {
    const { log, root, timeoutMs = NOTIFY_TIMEOUT_MS } = this.options;
    return new Promise((resolve) => {
      let stdout = '';
      let stderr = '';
      let ended = false;
      let child: ChildProcess | null = null;
      // Ends the wait even if a process that left the group keeps a pipe open.
      const timer = setTimeout(() => {
        try {
          if (child?.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // ended meanwhile
        }
        end(`ran past ${timeoutMs} ms and was killed`);
      }, timeoutMs);
      const end = (problem: string | null) => {
        if (ended) return;
        ended = true;
        clearTimeout(timer);
        child?.stdout?.destroy();
        child?.stderr?.destroy();
        if (problem) {
          if (!quiet) this.warned.add(what);
          log(quiet ? 'debug' : 'warn', `notification: ${what} (${argv[0]}) ${problem}`);
        }
        resolve(stdout);
      };
      try {
        // Its own process group, so that a timeout ends whatever the command started too.
        child = spawn(argv[0] as string, argv.slice(1), {
          cwd: root,
          detached: true,
          stdio: ['ignore', output ? 'pipe' : 'ignore', 'pipe'],
          env: { ...process.env, TMUX: '', TMUX_PANE: '', ENGINE_ROOT: root },
        });
      } catch (error) {
        end(`could not run: ${messageOf(error)}`);
        return;
      }
      child.stdout?.setEncoding('utf8').on('data', (data: string) => (stdout += data));
      child.stderr?.setEncoding('utf8').on('data', (data: string) => {
        if (stderr.length < STDERR_KEPT) stderr += data;
      });
      child.on('error', (error) => end(`could not run: ${messageOf(error)}`));
      child.on('close', (code, signal) => {
        const said = stderr.trim().slice(0, STDERR_KEPT);
        end(code === 0 ? null : `failed (${signal ?? `exit ${code}`})${said ? `: ${said}` : ''}`);
      });
    });
  }
}
