/** `engine stop [--root DIR] [--timeout S]`: stop the daemon of this root; its agents keep running. */
import type { CommandModule } from 'yargs';
import { EngineError } from '../errors.js';
import { rootOption } from './arguments.js';
import { printLine } from './output.js';
import { projectRoot } from './project-root.js';

interface Args {
  root?: string;
  timeout: string;
}

export const stopCommand: CommandModule<object, Args> = {
  command: 'stop',
  describe:
    "Stop this root's daemon (SIGTERM, as Ctrl-C: its agents keep running) and wait until it has exited",
  builder: (yargs) =>
    yargs
      .option('root', rootOption('Project root whose daemon to stop'))
      .option('timeout', {
        // A string, so that a bad value is echoed as typed (a number option would say NaN).
        type: 'string',
        default: '30',
        describe: 'Seconds to wait for the daemon to exit before saying it still runs (exit 1)',
      })
      .example('$0 stop', 'stop the daemon of the project around the current directory')
      .example('$0 stop --root ~/src/app', 'stop the daemon of another project')
      .example('$0 stop --timeout 120', 'wait up to two minutes for it to exit') as never,
  handler: async (args) => {
    const seconds = /^\s*(\d+\.?\d*|\.\d+)\s*$/.test(args.timeout) ? Number(args.timeout) : NaN;
    if (Number.isNaN(seconds))
      throw new EngineError(`--timeout: expected seconds from 0 up, got '${args.timeout}'`);
    const root = await projectRoot(args.root);
    const { stopDaemon } = await import('../service/stop-daemon.js');
    const outcome = await stopDaemon(root, { timeoutMs: seconds * 1000 });
    switch (outcome.kind) {
      case 'stopped':
        return printLine(
          `Stopped the daemon of ${root} (pid ${outcome.pid}); its agents keep running.`,
        );
      case 'none':
        throw new EngineError(`no daemon runs for ${root} (${outcome.why})`);
      case 'other-host':
        throw new EngineError(
          `the daemon of ${root} runs on host ${outcome.holder.host} (pid ${outcome.holder.pid}): stop it there`,
        );
      case 'not-permitted':
        throw new EngineError(
          `the daemon of ${root} (pid ${outcome.pid}) runs as another user: not permitted to stop it; run engine stop as that user`,
        );
      case 'still-running':
        throw new EngineError(
          `the daemon of ${root} (pid ${outcome.pid}) was sent SIGTERM and still runs after ${seconds} s`,
        );
    }
  },
};
