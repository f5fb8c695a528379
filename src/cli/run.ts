/**
 * `engine run --monitor-tags[=LIST] [paths..]`: the dispatch daemon.
 * `engine run <skill> <file> --session <dir>`: the agent wrapper the daemon starts in tmux.
 */
import { resolve } from 'node:path';
import type { CommandModule } from 'yargs';
import { EngineError } from '../errors.js';
import { WATCHER_KINDS } from '../daemon/watch-backend.js';
import type { RunArgs as Args } from './run-daemon.js';

export const runCommand: CommandModule<object, Args> = {
  command: 'run [args..]',
  describe:
    'Run the dispatch daemon (--monitor-tags), or one agent session (<skill> <file> --session <dir>)',
  builder: (yargs) =>
    yargs
      .positional('args', {
        type: 'string',
        array: true,
        default: [],
        describe: 'Paths to watch, or <skill> <file>',
      })
      .option('monitor-tags', {
        type: 'string',
        describe: "Watch for these tags or globs (comma list; default '#delegated-*')",
      })
      .option('session', { type: 'string', describe: 'Session directory (agent wrapper form)' })
      .option('root', {
        type: 'string',
        default: '.',
        describe: 'Project root holding directives/ and sessions/',
      })
      .option('debounce-ms', {
        type: 'number',
        default: 3000,
        describe: 'Quiet time before a changed file is read',
      })
      .option('watch', {
        type: 'boolean',
        default: true,
        describe: 'Watch files for changes; --no-watch relies on reconcile passes only',
      })
      .option('watcher', {
        choices: WATCHER_KINDS,
        default: 'parcel' as const,
        describe:
          'File watch backend: parcel (@parcel/watcher, one inotify watch per directory) or chokidar (one per file; used anyway where parcel cannot load)',
      })
      .option('rescan-interval-ms', {
        type: 'number',
        default: 60_000,
        describe: 'Reconcile pass period',
      })
      .option('reap-interval-ms', {
        type: 'number',
        default: 30_000,
        describe: 'Dead-claim check period',
      })
      .option('claim-grace-ms', {
        type: 'number',
        default: 60_000,
        describe: 'Time a claim may lack a session record',
      })
      .option('stale-after', {
        type: 'number',
        default: 45,
        describe: "Minutes without heartbeat before another host's claim is dead",
      })
      .option('max-agents', {
        type: 'number',
        default: 4,
        describe: 'Running agents at most (0: no cap)',
      })
      .option('agent-cmd', {
        type: 'string',
        describe: 'Agent command template ({skill} {noun} {file} {session} {tag})',
      })
      .option('runner', { choices: ['tmux', 'pty'] as const, default: 'tmux' as const })
      .option('tmux-socket', {
        type: 'string',
        describe: 'tmux server name (tmux -L); env ENGINE_TMUX_SOCKET',
      })
      .option('tmux-session', { type: 'string', default: 'dispatch' })
      .option('heartbeat-ms', {
        type: 'number',
        default: 15_000,
        describe: 'Agent wrapper heartbeat period',
      })
      .option('poll-ms', {
        type: 'number',
        default: 1000,
        describe: 'How often a running claim is checked',
      })
      .option('once', {
        type: 'boolean',
        default: false,
        describe: 'One pass: reap, dispatch what is ready, exit',
      })
      .option('dry-run', {
        type: 'boolean',
        default: false,
        describe: 'Print what would be claimed, in order; change nothing',
      })
      .option('log-format', { choices: ['text', 'json'] as const, default: 'text' as const })
      .option('verbose', { type: 'boolean', default: false }) as never,
  handler: async (args) => {
    if (args.session !== undefined) {
      const [skill, file, ...rest] = args.args;
      if (!skill || !file || rest.length > 0)
        throw new EngineError('Usage: engine run <skill> <file> --session <dir>');
      const { runSession } = await import('../sessions/run-session.js');
      process.exitCode = await runSession({
        sessionDir: resolve(args.session),
        skill,
        requestFile: file,
      });
      return;
    }
    if (args['monitor-tags'] === undefined) {
      throw new EngineError(
        'Nothing to run: use --monitor-tags for the daemon, or <skill> <file> --session <dir>',
      );
    }
    const { runDaemon } = await import('./run-daemon.js');
    await runDaemon(args);
  },
};
