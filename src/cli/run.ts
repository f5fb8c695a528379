/** `engine run --monitor-tags[=LIST] [paths..]`: the dispatch daemon. */
import type { CommandModule } from 'yargs';
import { EngineError } from '../errors.js';
import { WATCHER_KINDS } from '../watch/watch-backend.js';
import { numberFlag, RUNNERS, settingFlag } from '../daemon/daemon-options.js';
import { AGENT_KINDS } from '../agents/agent-profile.js';
import { rootOption } from './arguments.js';
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
        describe: `Run the daemon, watching for these tags or globs (comma list; default engine.json "monitorTags", else '#delegated-*')`,
      })
      .option(
        'root',
        rootOption('Project root holding directives/ (TAGS.md, engine.json) and sessions/'),
      )
      .option('debounce-ms', numberFlag('debounce-ms'))
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
      .option('rescan-interval-ms', numberFlag('rescan-interval-ms'))
      .option('reap-interval-ms', numberFlag('reap-interval-ms'))
      .option('claim-grace-ms', numberFlag('claim-grace-ms'))
      .option('stale-after', numberFlag('stale-after'))
      .option('close-after-done', numberFlag('close-after-done'))
      .option('max-agents', numberFlag('max-agents'))
      .option('agent', { choices: AGENT_KINDS, ...settingFlag('agent') })
      .option('agent-cmd', { type: 'string', ...settingFlag('agentCommand') })
      .option('claude-bin', { type: 'string', ...settingFlag('claudeBin') })
      .option('runner', { choices: RUNNERS, ...settingFlag('runner') })
      .option('tmux-socket', { type: 'string', ...settingFlag('tmuxSocket') })
      .option('tmux-session', { type: 'string', ...settingFlag('tmuxSession') })
      .option('heartbeat-ms', numberFlag('heartbeat-ms'))
      .option('poll-ms', numberFlag('poll-ms'))
      .option('retries', numberFlag('retries'))
      .option('retry-backoff-ms', numberFlag('retry-backoff-ms'))
      .option('limit-backoff', numberFlag('limit-backoff'))
      .option('aging', numberFlag('aging'))
      .option('worktree', { type: 'boolean', ...settingFlag('worktree') })
      .option('on-event', { type: 'string', ...settingFlag('notify') })
      .option('notify-via', { type: 'string', ...settingFlag('notifyVia') })
      .option('once', {
        type: 'boolean',
        default: false,
        describe: 'One pass: reap, dispatch what is ready, exit',
      })
      .option('dry-run', {
        type: 'boolean',
        default: false,
        describe:
          'Print every waiting item in the order the daemon claims them, with what each still waits for; change nothing',
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
