/**
 * Starts the real daemon (the built CLI) on a generated tree, on its own tmux server
 * (`--tmux-socket bench-<pid>-<n>`), with a trivial agent: the agent command is
 * `engine tag swap {file} #claimed-X #done-X` itself, one process that marks the item done.
 */
import { spawn } from 'node:child_process';
import { delimiter, dirname, join } from 'node:path';
import {
  ENGINE,
  NODE,
  forgetPid,
  killTmuxServer,
  registerPid,
  registerSocket,
  sleep,
} from './lib.mjs';

const quote = (value) => `'${value.replace(/'/g, `'\\''`)}'`;

export const TRIVIAL_AGENT = `${quote(NODE)} ${quote(ENGINE)} tag swap {file} {tag} '#done-{noun}'`;
/**
 * An agent that costs almost nothing (sed replaces the file by a rename): it shows what the daemon
 * itself can do. Safe here only because nothing else edits these files while it runs; real agents
 * use `engine tag swap`, which takes the request file's lock.
 */
export const SED_AGENT = `sed -i 's/{tag}/#done-{noun}/' {file}`;
export const AGENTS = { engine: TRIVIAL_AGENT, sed: SED_AGENT };

let sockets = 0;

/**
 * Spawns `engine run --monitor-tags` on `tree` with `extra` options. `ready` resolves with the
 * milliseconds from spawn to the daemon's `monitoring ...` line (it prints it once its first pass
 * over the tree is made and the watch is ready). A `root` other than the tree's own (one daemon
 * per root) holds that daemon's lock and state, and it watches the tree's sessions/ all the same.
 */
export function startDaemon(tree, extra = [], { root = tree.dir, agent = TRIVIAL_AGENT } = {}) {
  const socket = `bench-${process.pid}-${++sockets}`;
  registerSocket(socket);
  const args = [
    'run',
    '--monitor-tags',
    '--root',
    root,
    ...(root === tree.dir ? [] : [join(tree.dir, 'sessions')]),
    '--tmux-socket',
    socket,
    '--agent-cmd',
    agent,
    '--max-agents',
    '0',
    ...extra,
  ];
  const started = process.hrtime.bigint();
  // BENCH_DAEMON_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' profiles the daemon: node runs
  // it with them (NODE_OPTIONS refuses --cpu-prof) and the launcher's variables. Otherwise it
  // starts as a user starts it: the `engine` command, whose launcher runs the node on PATH (this
  // one) with the daemon's MALLOC_ARENA_MAX (docs/CLI.md, "How the command starts").
  const nodeArgs = (process.env.BENCH_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const [program, argv, launcher] =
    nodeArgs.length > 0
      ? [
          NODE,
          [...nodeArgs, ENGINE, ...args],
          process.env.MALLOC_ARENA_MAX === undefined
            ? { MALLOC_ARENA_MAX: '2', ENGINE_LAUNCHER_ARENA: '1' }
            : {},
        ]
      : [ENGINE, args, {}];
  const child = spawn(program, argv, {
    env: {
      ...process.env,
      PATH: `${dirname(NODE)}${delimiter}${process.env.PATH ?? ''}`,
      TMUX: '',
      TMUX_PANE: '',
      ...launcher,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  registerPid(child.pid);
  let output = '';
  const exited = new Promise((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal)),
  );
  const ready = new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      const before = output.length;
      output += chunk;
      if (output.length > 1_000_000) output = output.slice(-500_000);
      if (output.indexOf('monitoring ', Math.max(0, before - 20)) >= 0)
        resolve(Number(process.hrtime.bigint() - started) / 1e6);
    });
    void exited.then((code) =>
      reject(new Error(`daemon exited (${code}) before ready:\n${output}`)),
    );
  });
  ready.catch(() => undefined);
  return {
    pid: child.pid,
    socket,
    args,
    ready,
    exited,
    output: () => output,
    /** SIGTERM (SIGKILL after 15 s), then the tmux server by its socket. */
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timedOut = await Promise.race([
          exited.then(() => false),
          sleep(15_000).then(() => true),
        ]);
        if (timedOut) {
          child.kill('SIGKILL');
          await exited;
        }
      }
      forgetPid(child.pid);
      killTmuxServer(socket);
    },
  };
}
