/**
 * `npm start` (scripts/start-demo.mjs), run as a user runs it and stopped with SIGINT while its
 * agent works, or with SIGHUP (the terminal closed): it uses a tmux server of its own and a project of its own, tells the exact attach
 * command, and leaves no process and no tmux server behind, only the directory it names.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { killProcessesWithEnv, processesWithEnv } from '../helpers/process-env.js';
import { waitFor } from '../helpers/wait-for.js';

const SCRIPT = fileURLToPath(new URL('../../scripts/start-demo.mjs', import.meta.url));

const mark = `ENGINE_DEMO_TEST=${randomBytes(6).toString('hex')}`;
let child: ChildProcess | undefined;
let socket: string | undefined;
let root: string | undefined;

afterEach(async () => {
  // Whatever the test's outcome: the demo's server by its socket, its processes by pid.
  if (socket !== undefined) spawnSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
  for (const { pid } of processesIn(root)) process.kill(pid, 'SIGKILL');
  killProcessesWithEnv(mark);
  if (root !== undefined) await rm(root, { recursive: true, force: true });
  child = socket = root = undefined;
});

/** Processes whose command line names a path under `dir` (the demo agent gets its request's). */
function processesIn(dir: string | undefined): { pid: number; command: string }[] {
  if (dir === undefined) return [];
  const found = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const command = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ');
      if (command.includes(dir)) found.push({ pid: Number(name), command });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

const serverRuns = (name: string): boolean =>
  spawnSync('tmux', ['-L', name, 'list-sessions'], { stdio: 'ignore' }).status === 0;

// SIGINT is Ctrl-C; SIGHUP is the terminal closed.
it.each(['SIGINT', 'SIGHUP'] as const)(
  'runs on its own tmux server, says how to attach, and %s leaves nothing running',
  async (signal) => {
    const [name, value] = mark.split('=') as [string, string];
    child = spawn(process.execPath, [SCRIPT], {
      // Long enough that the agent is still working when the test stops the demo.
      env: { ...process.env, [name]: value, ENGINE_DEMO_AGENT_SECONDS: '120' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) =>
      child?.on('exit', (code) => resolve(code)),
    );

    const attach = await waitFor(() => /tmux -L (engine-demo-\d+) attach -t dispatch/.exec(out), {
      message: () => `the attach line; output:\n${out}`,
    });
    socket = attach[1] as string;
    root = (/Demo project: (\S+)/.exec(out) as RegExpExecArray)[1] as string;
    expect(out).toContain('The agent works for 120 s');
    const request = join(root, 'sessions', 'DEMO_REQUEST.md');
    await waitFor(async () => (await readFile(request, 'utf8')).includes('#claimed-demo'), {
      message: () => `the claim; output:\n${out}`,
    });
    // The agent itself, not the daemon (whose --agent-cmd names the script too).
    const isAgent = (command: string) =>
      command.includes('demo-agent.mjs') && !command.includes('--monitor-tags');
    await waitFor(() => processesIn(root).some((p) => isAgent(p.command)), {
      message: () => `the agent running; output:\n${out}`,
    });
    expect(serverRuns(socket)).toBe(true);

    child.kill(signal);
    expect(await exited).toBe(0);
    expect(out).toContain(
      `Demo stopped: the daemon and tmux server '${socket}' (with the agent) are gone. Left: ${root}`,
    );
    expect(serverRuns(socket)).toBe(false);
    await waitFor(() => processesIn(root).length === 0 && processesWithEnv(mark).length === 0, {
      timeoutMs: 5000,
      message: () =>
        `no process left; found:\n${[...processesIn(root), ...processesWithEnv(mark)].map((p) => `${p.pid} ${p.command}`).join('\n')}`,
    });
  },
  60_000,
);
