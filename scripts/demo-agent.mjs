#!/usr/bin/env node
// A stand-in for Claude Code, shipped so `npm start` shows the whole lifecycle: it "works" for a
// few seconds in its tmux window, appends a `## Response` to the request, and marks it done.
import { execFileSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const file = process.argv[2] ?? process.env.ENGINE_REQUEST_FILE;
const noun = process.env.ENGINE_NOUN ?? 'demo';
// How long it "works": its second argument (npm start gives one), else DEMO_AGENT_SECONDS, else 3.
const seconds = Number(process.argv[3] ?? process.env.DEMO_AGENT_SECONDS ?? 3);
if (!file) {
  process.stderr.write('usage: demo-agent.mjs <request-file> [seconds]\n');
  process.exit(2);
}
const engine = fileURLToPath(new URL('../dist/cli/main.cjs', import.meta.url));

process.stdout.write(
  `demo agent: working on ${file} (#claimed-${noun}), attempt ${process.env.ENGINE_ATTEMPT ?? 1}\n`,
);
const until = Date.now() + seconds * 1000;
await new Promise((resolve) => {
  const tick = setInterval(() => {
    process.stdout.write('.');
    if (Date.now() >= until) {
      clearInterval(tick);
      resolve();
    }
  }, 250);
});
appendFileSync(
  file,
  `\n## Response\nThe demo agent handled this request at ${new Date().toISOString()} (session ${process.env.ENGINE_SESSION_DIR ?? '-'}).\n`,
);
execFileSync(process.execPath, [engine, 'tag', 'swap', file, `#claimed-${noun}`, `#done-${noun}`], {
  stdio: 'inherit',
});
process.stdout.write(`\ndemo agent: marked #done-${noun}\n`);
