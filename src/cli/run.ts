/** `engine run --monitor-tags[=LIST] [paths..]`: the dispatch daemon. */
import type { CommandModule } from 'yargs';
import { EngineError } from '../errors.js';
import { WATCHER_KINDS } from '../daemon/watch-backend.js';
import { DEFAULT_JUDGE_OPTIONS } from '../sessions/judge-session.js';
import type { RunArgs as Args } from './run-daemon.js';

export const runCommand: CommandModule<object, Args> = {
  command: 'run [args..]',
  describe: 'Run the dispatch daemon (--monitor-tags)',
  builder: (yargs) =>
    yargs
      .positional('args', {
        type: 'string',
        array: true,
        default: [],
        describe: 'Paths to watch',
      })
      .option('monitor-tags', {
        type: 'string',
        describe: "Watch for these tags or globs (comma list; default '#delegated-*')",
      })
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
        describe: 'Reconcile pass period (and of the directives/TAGS.md check)',
      })
      .option('reap-interval-ms', {
        type: 'number',
        default: 30_000,
        describe: 'Dead-claim check period',
      })
      .option('claim-grace-ms', {
        type: 'number',
        default: DEFAULT_JUDGE_OPTIONS.claimGraceMs,
        describe: 'Time a claim may lack a session record',
      })
      .option('stale-after', {
        type: 'number',
        default: DEFAULT_JUDGE_OPTIONS.staleAfterMs / 60_000,
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
        describe: 'How often the agent wrapper touches its .heartbeat',
      })
      .option('poll-ms', {
        type: 'number',
        default: 5000,
        describe:
          'How often a running claim is checked when none of its files changed (changes are seen at once)',
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
    if (args['monitor-tags'] === undefined) {
      throw new EngineError('Nothing to run: use --monitor-tags to run the daemon');
    }
    const { runDaemon } = await import('./run-daemon.js');
    await runDaemon(args);
  },
};
