/**
 * The `engine` command, built as one CommonJS module (scripts/bundle-lean.mjs: dist/cli/main.cjs,
 * with a sh launcher on its first two lines). `engine status` and
 * `engine tag find` take the lean path (lean-entry.ts), which never loads yargs or the other
 * commands; everything else, and whatever the lean path cannot answer, goes to the full CLI
 * (full-cli.ts), loaded by import().
 */
import { answerLean } from './lean-entry.js';
import { printError } from './output.js';

async function run(argv: string[]): Promise<number> {
  const lean = await answerLean(argv.slice(2));
  if (lean !== null) return lean;
  const [{ main }, { hideBin }] = await Promise.all([
    import('./full-cli.js'),
    import('yargs/helpers'),
  ]);
  return main(hideBin(argv));
}

let settled = false;
void run(process.argv).then(
  (code) => {
    settled = true;
    process.exitCode = code;
  },
  (error: unknown) => {
    // Thrown on: Node prints it and exits 1, as for an error at the top level.
    settled = true;
    throw error;
  },
);
// Nothing left to wait for and the command unfinished (its answer can never come): a failure,
// as an unsettled top-level await was (exit 13), never a silent success. Not on process.exit()
// (yargs' --help and --version end so), which emits no beforeExit.
process.on('beforeExit', () => {
  if (settled) return;
  printError('the command stopped before it finished (an internal error)');
  process.exitCode = 13;
});
