#!/usr/bin/env node
// `npm start`: the whole lifecycle on this repository's own sessions/ in under a minute.
// Copies the demo request into sessions/ (git-ignored), approves it, and runs the daemon with
// the demo agent. Point it at Claude Code by dropping --agent-cmd (see README).
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const engine = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const agent = fileURLToPath(new URL('./demo-agent.mjs', import.meta.url));
const request = `${root}sessions/DEMO_REQUEST.md`;

mkdirSync(`${root}sessions`, { recursive: true });
copyFileSync(`${root}examples/demo/DEMO_REQUEST.md`, request);
const quote = (value) => `'${value.replace(/'/g, `'\\''`)}'`;
const say = (line) => process.stdout.write(`\n>>> ${line}\n`);
say(`A fresh request: ${request} (#needs-demo). Approving it, as a human would:`);
execFileSync(process.execPath, [engine, 'tag', 'swap', request, '#needs-demo', '#delegated-demo'], {
  stdio: 'inherit',
});
execFileSync(
  process.execPath,
  [engine, 'tag', 'find', '#delegated-demo', `${root}sessions`, '--context'],
  { stdio: 'inherit' },
);
say('Starting the daemon. Watch the agent with `tmux attach -t dispatch`; stop with Ctrl-C.');
const daemon = spawn(
  process.execPath,
  [
    engine,
    'run',
    '--monitor-tags',
    '--root',
    root,
    '--debounce-ms',
    '1000',
    '--agent-cmd',
    `${quote(process.execPath)} ${quote(agent)} {file}`,
  ],
  { stdio: 'inherit' },
);
const stop = () => daemon.kill('SIGTERM');
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
daemon.on('exit', (code) => process.exit(code ?? 0));
