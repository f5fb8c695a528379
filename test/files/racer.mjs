// A racing `engine` process for the claim tests. `--barrier`: load the CLI's modules, report
// "ready" on fd 3, wait for one byte on stdin, then run the CLI once with the remaining
// arguments (as a `--import` preload, so the real dist/cli/main.cjs runs as the entry point).
// Otherwise (warm mode): read one JSON line per round from stdin, `{ "round", "args" }`, run the
// built full CLI's main (what dist/cli/main.cjs runs for every command but status and find) in
// this process with those arguments the moment the line arrives, and
// report `{ "round", "code", "stdout", "stderr" }` as a JSON line on fd 3. Warm racers are real,
// separate processes racing on the real lock; they only skip re-loading modules every round.
import { writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath, URL } from 'node:url';

const CLI = new URL('../../dist/cli/main.cjs', import.meta.url);
const CLI_PATH = fileURLToPath(CLI);

await import('yargs');
const { hideBin } = await import('yargs/helpers');
const { main } = await import('../../dist/cli/full-cli.js');

if (process.env.RACER_MODE === 'barrier') {
  writeSync(3, 'ready\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  process.stdin.destroy();
} else {
  const lines = createInterface({ input: process.stdin });
  writeSync(3, `${JSON.stringify({ ready: true })}\n`);
  for await (const line of lines) {
    const { round, args } = JSON.parse(line);
    let stdout = '';
    let stderr = '';
    const out = process.stdout.write;
    const err = process.stderr.write;
    process.stdout.write = (chunk) => ((stdout += String(chunk)), true);
    process.stderr.write = (chunk) => ((stderr += String(chunk)), true);
    process.argv = [process.argv[0], CLI_PATH, ...args];
    process.exitCode = undefined;
    let code;
    try {
      code = await main(hideBin(process.argv));
    } finally {
      process.stdout.write = out;
      process.stderr.write = err;
    }
    process.exitCode = undefined;
    writeSync(3, `${JSON.stringify({ round, code, stdout, stderr })}\n`);
  }
  process.exit(0);
}
