#!/usr/bin/env node
/**
 * The `engine` command, built as one CommonJS module (scripts/bundle-lean.mjs: dist/cli/main.cjs,
 * a sh launcher on its first two lines, scripts/write-launcher.mjs). `engine status` and
 * `engine tag find` take the lean path (lean-entry.ts), which never loads yargs or the other
 * commands; everything else, and whatever the lean path cannot answer, goes to the full CLI
 * (full-cli.ts), loaded by import().
 */
import { answerLean } from './lean-entry.js';

async function run(argv: string[]): Promise<number> {
  const lean = await answerLean(argv.slice(2));
  if (lean !== null) return lean;
  const [{ main }, { hideBin }] = await Promise.all([
    import('./full-cli.js'),
    import('yargs/helpers'),
  ]);
  return main(hideBin(argv));
}

void run(process.argv).then((code) => {
  process.exitCode = code;
});
