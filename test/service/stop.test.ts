/**
 * `engine stop`: the daemon named by the root's lock, proved to be that process, is sent SIGTERM
 * and waited for; its agents keep running. No daemon, a reused pid, another host, or a daemon that
 * does not exit: a clear message and exit 1, and no process signalled that is not the daemon.
 */
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { daemonLockPath } from '../../src/daemon/daemon-lock.js';
import { stopDaemon } from '../../src/service/stop-daemon.js';
import { readProcessIdentity, type ProcessIdentity } from '../../src/process/process-identity.js';
import { isAlive, useDaemonHarness, waitForReady } from '../helpers/daemon-harness.js';
import { runCli } from '../helpers/run-cli.js';
import { Children, waitFor } from '../process/spawned.js';

const h = useDaemonHarness();

async function writeLock(root: string, identity: ProcessIdentity): Promise<void> {
  await mkdir(join(root, 'sessions', '.engine'), { recursive: true });
  await writeFile(daemonLockPath(root), `${JSON.stringify(identity)}\n`);
}

/** A process that ignores SIGTERM, started and ready (its handler installed) before it is named. */
async function stubbornProcess(children: Children): Promise<number> {
  const child = spawn(
    process.execPath,
    ['-e', "process.on('SIGTERM', () => {}); console.log('ready'); setInterval(() => {}, 1000);"],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  children.track(child);
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  await waitFor(() => out.includes('ready'), { message: 'the stubborn process to be ready' });
  return child.pid!;
}

describe('engine stop', () => {
  it('stops the running daemon of the root and waits until it exited; its agent keeps running', async () => {
    const d = h.start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    await h.request('REQ.md', '# R\n**Tags**: #delegated-fix\n');
    const [agent] = await h.waitForAgents(1);
    h.killAtEnd(agent!.pid);

    const result = await runCli(['stop', '--root', h.root]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Stopped the daemon of ${h.root} (pid ${d.child.pid})`);
    // Waited: the daemon has already exited when stop returns.
    expect(d.child.exitCode ?? d.child.signalCode).not.toBeNull();
    expect(await d.exited).toBe(0);
    expect(isAlive(agent!.pid)).toBe(true);
  });

  it('says no daemon runs and exits 1 when the root has none', async () => {
    const result = await runCli(['stop', '--root', h.root]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`no daemon runs for ${h.root} (no daemon lock)`);
  });

  it('never signals a process that reuses the pid of the lock', async () => {
    const children = new Children();
    try {
      const pid = await stubbornProcess(children);
      const now = readProcessIdentity(pid)!;
      await writeLock(h.root, { ...now, startTicks: String(Number(now.startTicks) - 1) });
      const result = await runCli(['stop', '--root', h.root]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`no daemon runs for ${h.root} (its lock names pid ${pid}`);
      expect(isAlive(pid)).toBe(true);
    } finally {
      await children.killAll();
    }
  });

  it("refuses a lock of another host's daemon", async () => {
    await writeLock(h.root, { pid: 1, startTicks: '1', bootId: 'b', host: 'elsewhere.example' });
    const result = await runCli(['stop', '--root', h.root]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('runs on host elsewhere.example (pid 1): stop it there');
  });

  it('says so and exits 1 when the daemon has not exited by the deadline', async () => {
    const children = new Children();
    try {
      const pid = await stubbornProcess(children);
      await writeLock(h.root, readProcessIdentity(pid)!);
      const result = await runCli(['stop', '--root', h.root, '--timeout', '0.3']);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`(pid ${pid}) was sent SIGTERM and still runs after 0.3 s`);
      expect(isAlive(pid)).toBe(true);
    } finally {
      await children.killAll();
    }
  });

  it('says the daemon runs as another user when kill is not permitted, and never claims it stopped', async () => {
    const children = new Children();
    try {
      const pid = await stubbornProcess(children);
      await writeLock(h.root, readProcessIdentity(pid)!);
      // Tests run as root here, so EPERM is injected as kill(2) gives it for another user's pid.
      const eperm = () => {
        throw Object.assign(new Error('kill EPERM'), { code: 'EPERM' });
      };
      const outcome = await stopDaemon(h.root, { timeoutMs: 300, kill: eperm });
      expect(outcome).toEqual({ kind: 'not-permitted', pid });
      expect(isAlive(pid)).toBe(true);
    } finally {
      await children.killAll();
    }
  });

  it('refuses a timeout that is not a number, echoing it', async () => {
    const result = await runCli(['stop', '--root', h.root, '--timeout', 'soon']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("--timeout: expected seconds from 0 up, got 'soon'");
  });
});
