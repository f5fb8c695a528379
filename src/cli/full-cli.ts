/**
 * The `engine` command's full CLI (yargs): every command, help, and the errors of a command
 * line that does not parse; the only place besides the lean path (lean-entry.ts) that prints
 * errors and picks exit codes.
 */
import yargs from 'yargs';
import { EngineError } from '../errors.js';
import { agentHookCommand } from './agent-hook.js';
import { awaitTagCommand } from './await-tag.js';
import { attachCommand } from './attach.js';
import { boardCommand } from './board.js';
import { doctorCommand } from './doctor.js';
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

export async function main(argv: string[]): Promise<number> {
  try {
    await yargs(argv)
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
      .command(doctorCommand as never)
      .command(agentHookCommand)
      .demandCommand(1, 'Name a command; see engine --help')
      .strict()
      .fail((message, error) => {
        throw error ?? new EngineError(`${message} (see engine --help)`);
      })
      .help()
      .version()
      .wrap(null)
      .parseAsync();
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
