/** checkLiveness against real processes on this machine (Linux /proc). */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkLiveness,
  describeLiveness,
  readProcessIdentity,
  selfIdentity,
  systemProbe,
  type ProcessIdentity,
} from '../../src/process/process-identity.js';
import {
  AS_NOBODY,
  Children,
  NOBODY,
  NS_LAST_PID,
  canRunAsNobody,
  exited,
  nsLastPidWritable,
  procUid,
  startZombie,
  uptimeTicks,
  waitFor,
} from './spawned.js';
import { writeFileSync } from 'node:fs';
import { OtherUserDir } from '../helpers/other-user.js';

const children = new Children();
const tempDirs: string[] = [];

afterEach(async () => {
  await children.killAll();
  for (const dir of tempDirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** Spawns `sleep 30` and waits until /proc shows it. */
async function startSleeper(command = 'sleep', args = ['30']) {
  const child = children.spawn(command, args);
  const identity = await waitFor(() => readProcessIdentity(child.pid!), {
    message: `identity of ${child.pid}`,
  });
  return { child, identity };
}

describe('checkLiveness on real processes', () => {
  it('a live child is alive; killed and reaped, it is dead', async () => {
    const { child, identity } = await startSleeper();
    expect(identity.bootId).toMatch(/^[0-9a-f-]{36}$/);
    expect(checkLiveness(identity)).toBe('alive');
    process.kill(child.pid!, 'SIGKILL');
    await exited(child);
    expect(await waitFor(() => checkLiveness(identity) === 'dead')).toBe(true);
    expect(systemProbe.kill0(identity.pid)).toBe('missing');
    expect(describeLiveness(identity, 'dead')).toBe(`pid ${identity.pid} is gone`);
  });

  it('an exited but unreaped child is a zombie (kill(pid,0) still says it exists), then dead', async () => {
    const zombie = await startZombie(children);
    const identity = readProcessIdentity(zombie.pid);
    expect(identity).not.toBeNull();
    expect(checkLiveness(identity!)).toBe('zombie');
    expect(systemProbe.kill0(zombie.pid)).toBe('exists');
    zombie.release(); // sh reaps it and exits
    await exited(zombie.parent);
    expect(await waitFor(() => checkLiveness(identity!) === 'dead')).toBe(true);
  });

  it('a record whose start time differs from the running process is reused', async () => {
    const { identity } = await startSleeper();
    const older = { ...identity, startTicks: String(Number(identity.startTicks) - 1000) };
    expect(checkLiveness(older)).toBe('reused');
    expect(describeLiveness(older, 'reused')).toMatch(/another process/);
    expect(checkLiveness(identity)).toBe('alive');
  });

  it('a record from another boot is previous-boot; from another host, other-host', async () => {
    const { identity } = await startSleeper();
    expect(checkLiveness({ ...identity, bootId: '00000000-0000-0000-0000-000000000000' })).toBe(
      'previous-boot',
    );
    expect(checkLiveness({ ...identity, host: `not-${identity.host}` })).toBe('other-host');
  });

  it('a process whose comm has spaces and parentheses is read correctly', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'engine-comm-'));
    tempDirs.push(dir);
    const weird = join(dir, '(a) b (c)');
    await symlink(await which('sleep'), weird);
    const { child, identity } = await startSleeper(weird);
    const stat = await waitFor(() => {
      const text = systemProbe.readStat(child.pid!);
      return text?.includes('((a) b (c))') ? text : null;
    });
    expect(stat).toContain(`${child.pid} ((a) b (c)) `);
    expect(checkLiveness(identity)).toBe('alive');
  });

  it('this process and pid 1 are alive', () => {
    expect(checkLiveness(selfIdentity())).toBe('alive');
    const init = readProcessIdentity(1);
    expect(init).not.toBeNull();
    expect(checkLiveness(init!)).toBe('alive');
  });

  it.skipIf(!canRunAsNobody())("another user's process is alive", async () => {
    const child = children.spawn('setpriv', [...AS_NOBODY, 'sleep', '30']);
    // setpriv execs sleep, so the pid is the sleeper's once the uid has changed.
    await waitFor(() => procUid(child.pid!) === NOBODY, { message: 'uid change' });
    const identity = readProcessIdentity(child.pid!);
    expect(identity).not.toBeNull();
    expect(checkLiveness(identity!)).toBe('alive');
  });

  it.skipIf(!canRunAsNobody())(
    'judged as nobody: root processes answer EPERM to kill(pid,0) and are still alive',
    async () => {
      const { identity: rootSleeper } = await startSleeper();
      const init = readProcessIdentity(1)!;
      const self = selfIdentity();
      const gone = { ...rootSleeper, startTicks: String(Number(rootSleeper.startTicks) - 1) };
      // Bundled into a directory nobody can read: the checkout may be in one it cannot enter.
      const other = await OtherUserDir.create();
      tempDirs.push(other.dir);
      const script = await other.bundle(
        fileURLToPath(new URL('./check-as-other-user.ts', import.meta.url)),
      );
      const { stdout } = await promisify(execFile)(
        'setpriv',
        [...AS_NOBODY, process.execPath, script, JSON.stringify([rootSleeper, init, self, gone])],
        { cwd: other.dir, timeout: 30_000 },
      );
      const results = JSON.parse(stdout) as { uid: number; kill0: string; liveness: string }[];
      expect(results.map((r) => [r.uid, r.kill0, r.liveness])).toEqual([
        [NOBODY, 'eperm', 'alive'],
        [NOBODY, 'eperm', 'alive'],
        [NOBODY, 'eperm', 'alive'],
        [NOBODY, 'eperm', 'reused'],
      ]);
    },
  );

  it('a pid really reused by a new process (forced through ns_last_pid) is reused', async (ctx) => {
    const ATTEMPTS = 300;
    if (!nsLastPidWritable()) {
      ctx.skip(`${NS_LAST_PID} is not writable here (needs root with CAP_SYS_ADMIN)`);
    }
    const { child: victim, identity } = await startSleeper();
    process.kill(victim.pid!, 'SIGKILL');
    await exited(victim);
    expect(checkLiveness(identity)).toBe('dead');
    // Start times are in clock ticks (10 ms): let at least one full tick pass so the new process
    // cannot share the victim's start time (the one case pid + start time cannot tell apart).
    await waitFor(() => uptimeTicks() > Number(identity.startTicks) + 1);

    // Under a full parallel test run other processes take pids all the time: many attempts.
    let reuser: ProcessIdentity | null = null;
    for (let attempt = 0; attempt < ATTEMPTS && reuser === null; attempt++) {
      writeFileSync(NS_LAST_PID, String(identity.pid - 1));
      const { child, identity: candidate } = await startSleeper();
      // Another process on the machine may have taken the pid first; then try again.
      if (child.pid === identity.pid) reuser = candidate;
      else {
        process.kill(child.pid!, 'SIGKILL');
        await exited(child);
      }
    }
    expect(reuser, `the pid was never handed out again in ${ATTEMPTS} attempts`).not.toBeNull();
    expect(systemProbe.kill0(identity.pid)).toBe('exists'); // what a naive check would trust
    expect(reuser!.startTicks).not.toBe(identity.startTicks);
    expect(checkLiveness(identity)).toBe('reused');
    expect(checkLiveness(reuser!)).toBe('alive');
  });
});

async function which(command: string): Promise<string> {
  const { stdout } = await promisify(execFile)('sh', ['-c', `command -v ${command}`]);
  return stdout.trim();
}
