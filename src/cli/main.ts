#!/usr/bin/env node
/**
 * The `engine` command. `engine status` and `engine tag find`, when a daemon answers them, take
 * the lean path (lean-entry.ts), which never loads yargs or the other commands; everything else,
 * and whatever the lean path cannot answer, goes to the full CLI (full-cli.ts).
 */
import { answerLean } from './lean-entry.js';

const argv = process.argv.slice(2);
const lean = await answerLean(argv);
if (lean !== null) process.exitCode = lean;
else {
  const [{ main }, { hideBin }] = await Promise.all([
    import('./full-cli.js'),
    import('yargs/helpers'),
  ]);
  process.exitCode = await main(hideBin(process.argv));
}
