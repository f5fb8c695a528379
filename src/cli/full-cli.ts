/**
 * The `engine` command's full CLI (yargs): every command, help, and the errors of a command
 * line that does not parse; the only place besides the lean path (lean-entry.ts) that prints
 * errors and picks exit codes.
 */
import yargs, { type Argv } from 'yargs';
import { EngineError } from '../errors.js';
import { agentHookCommand } from './agent-hook.js';
import { awaitTagCommand } from './await-tag.js';
import { attachCommand } from './attach.js';
import { boardCommand } from './board.js';
import { claimsCommand } from './claims.js';
import { explainFailure, type FailedLevel } from './command-line-errors.js';
import { completionCommand } from './completion.js';
import { doctorCommand } from './doctor.js';
import { helpCommand } from './help.js';
import { initCommand } from './init.js';
import { newCommand } from './new.js';
import { cancelCommand, closeCommand, retryCommand } from './item-commands.js';
import { logsCommand } from './logs.js';
import { printError } from './output.js';
import { resumeCommand } from './resume.js';
import { runCommand } from './run.js';
import { serviceCommand } from './service.js';
import { statusCommand } from './status.js';
import { stopCommand } from './stop.js';
import { tagCommand } from './tag.js';
import { worktreeCommand } from './worktree.js';

/** The CLI for `argv`, not yet parsed: main parses it; help and completion read it. */
export function engineCli(argv: string[]): Argv {
  return yargs(argv)
    .scriptName('engine')
    .usage('$0 <command>\n\nTurns tags in markdown files into a work queue for coding agents.')
    .parserConfiguration({ 'parse-positional-numbers': false })
    .command(initCommand as never)
    .command(newCommand as never)
    .command(tagCommand)
    .command(awaitTagCommand)
    .command(runCommand as never)
    .command(stopCommand as never)
    .command(serviceCommand)
    .command(statusCommand as never)
    .command(boardCommand as never)
    .command(attachCommand as never)
    .command(logsCommand as never)
    .command(resumeCommand as never)
    .command(cancelCommand as never)
    .command(retryCommand as never)
    .command(closeCommand as never)
    .command(worktreeCommand)
    .command(claimsCommand)
    .command(doctorCommand as never)
    .command(agentHookCommand)
    .command(helpCommand(engineCli) as never)
    .command(completionCommand as never)
    .demandCommand(1, 'Name a command')
    .strict()
    .fail((message, error, level) => {
      // yargs wraps what a coerce throws (a bad number, arguments.ts) in its own error.
      if (error?.name === 'YError') throw new EngineError(error.message);
      if (error) throw error;
      const explained = explainFailure(message, level as unknown as FailedLevel, argv);
      if (explained.showHelp)
        (level as unknown as { showHelp(to: string): void }).showHelp('error');
      throw new EngineError(explained.message);
    })
    .example('$0 init', 'Make this directory an engine project')
    .example("$0 tag find '#needs-fix'", 'The requests waiting for a fix')
    .example('$0 run --monitor-tags', 'Run the dispatch daemon')
    .help()
    .alias('h', 'help')
    .describe('help', 'Show help (engine help CMD: the help of one command)')
    .version()
    .alias('v', 'version')
    .describe('version', "Show engine's version")
    .wrap(null);
}

/**
 * yargs renders the help text of the command it runs as the command's handler starts, kept for
 * a failure it may show later: 0.2 s of CPU for `run`, before the daemon's first pass. This CLI
 * never shows help once a handler runs (`.fail` rethrows a handler's error, and help is only
 * shown for a command line that does not parse, before any handler), so the render is skipped.
 * What `--help` and an error print is rendered when asked, as before.
 */
export function withoutHelpCache(cli: Argv): Argv {
  const internal = cli as unknown as {
    getInternalMethods(): { getUsageInstance(): { cacheHelpMessage(): void } };
  };
  internal.getInternalMethods().getUsageInstance().cacheHelpMessage = () => undefined;
  return cli;
}

export async function main(argv: string[]): Promise<number> {
  try {
    await withoutHelpCache(engineCli(argv)).parseAsync();
    return 0;
  } catch (error) {
    if (error instanceof EngineError) {
      printError(error.message);
      return error.exitCode;
    }
    printError(error instanceof Error ? (error.stack ?? error.message) : String(error));
    return 1;
  }
}
