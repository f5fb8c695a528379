#!/usr/bin/env node
// `npm start`: the whole lifecycle in under a minute, in a project of its own (a temporary
// directory with examples/demo/), on a tmux server of its own (never the user's default one).
// It approves the demo request and runs the daemon with the demo agent, which stays in its
// window for ENGINE_DEMO_AGENT_SECONDS (default 20) so there is time to attach. Ctrl-C stops the
// daemon and the demo's tmux server (its agent with it); only the demo directory is left.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const engine = fileURLToPath(new URL('../dist/cli/main.cjs', import.meta.url));
const agent = fileURLToPath(new URL('./demo-agent.mjs', import.meta.url));
const examples = fileURLToPath(new URL('../examples/demo/', import.meta.url));
const seconds = process.env.ENGINE_DEMO_AGENT_SECONDS ?? '20';
if (!/^[1-9][0-9]*$/.test(seconds)) {
  process.stderr.write(
    `ENGINE_DEMO_AGENT_SECONDS must be a whole number of seconds, got '${seconds}'\n`,
  );
  process.exit(2);
}
const root = mkdtempSync(join(tmpdir(), 'engine-demo-'));
const socket = `engine-demo-${process.pid}`;
mkdirSync(join(root, 'directives'));
mkdirSync(join(root, 'sessions'));
copyFileSync(join(examples, 'TAGS.md'), join(root, 'directives', 'TAGS.md'));
const request = join(root, 'sessions', 'DEMO_REQUEST.md');
copyFileSync(join(examples, 'DEMO_REQUEST.md'), request);

const quote = (value) => `'${value.replace(/'/g, `'\\''`)}'`;
const say = (line) => process.stdout.write(`\n>>> ${line}\n`);
say(`Demo project: ${root}`);
say(`A fresh request: ${request} (#needs-demo). Approving it, as a human would:`);
execFileSync(process.execPath, [engine, 'tag', 'approve', request, '--to', 'delegated'], {
  stdio: 'inherit',
});
execFileSync(process.execPath, [engine, 'tag', 'find', '#delegated-demo', root, '--context'], {
  stdio: 'inherit',
});
say(
  `Starting the daemon on tmux server '${socket}' (not your default one). The agent works for ${seconds} s; watch it with:\n\n    tmux -L ${socket} attach -t dispatch\n\n    (detach with Ctrl-B d). Stop the demo with Ctrl-C.`,
);
const daemon = spawn(
  process.execPath,
  [
    engine,
    'run',
    '--monitor-tags',
    '--root',
    root,
    '--tmux-socket',
    socket,
    '--debounce-ms',
    '500',
    '--agent-cmd',
    `${quote(process.execPath)} ${quote(agent)} {file} ${seconds}`,
  ],
  { stdio: 'inherit' },
);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  // The daemon leaves agents running when it stops (its design); the demo's agent lives on the
  // demo's own tmux server, so ending that server ends it too.
  daemon.kill('SIGTERM');
};
// SIGHUP: the terminal closed. Its default would end this script before the exit handler below
// ends the demo's tmux server.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, stop);
daemon.on('exit', (code, signal) => {
  spawnSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
  say(
    `Demo stopped: the daemon and tmux server '${socket}' (with the agent) are gone. Left: ${root} (the demo project; rm -rf it when done).`,
  );
  process.exit(stopping || signal !== null ? 0 : (code ?? 0));
});
