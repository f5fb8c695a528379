import { describe, expect, it } from 'vitest';
import { EngineError } from '../../src/errors.js';
import {
  checkLiveness,
  describeLiveness,
  isAlive,
  readProcessIdentity,
  selfIdentity,
  type Liveness,
  type ProcessIdentity,
} from '../../src/process/process-identity.js';
import { BOOT, HOST, fakeProbe, statLine } from './fake-probe.js';

const PID = 4242;
const TICKS = '123456';
const recorded: ProcessIdentity = { pid: PID, startTicks: TICKS, bootId: BOOT, host: HOST };
const running = statLine(PID, 'claude', 'S', TICKS);

describe('checkLiveness (injected probe)', () => {
  it('is alive for the same pid, start time, boot and host', () => {
    expect(checkLiveness(recorded, fakeProbe({ stats: { [PID]: running } }))).toBe('alive');
  });

  it("is alive for another user's process although kill(pid,0) says EPERM", () => {
    const probe = fakeProbe({ stats: { [PID]: running }, kill0s: { [PID]: 'eperm' } });
    expect(checkLiveness(recorded, probe)).toBe('alive');
    // /proc answered, so kill(2) was not even asked.
    expect(probe.kill0Calls).toEqual([]);
  });

  it('is dead when there is no /proc entry and kill(pid,0) says ESRCH', () => {
    expect(checkLiveness(recorded, fakeProbe())).toBe('dead');
  });

  it('is a zombie in state Z, X or x', () => {
    for (const state of ['Z', 'X', 'x']) {
      const probe = fakeProbe({ stats: { [PID]: statLine(PID, 'claude', state, TICKS) } });
      expect(checkLiveness(recorded, probe), state).toBe('zombie');
    }
  });

  it('is reused when the start time differs, even if the new process is a zombie', () => {
    for (const state of ['S', 'Z']) {
      const probe = fakeProbe({ stats: { [PID]: statLine(PID, 'bash', state, '999999') } });
      expect(checkLiveness(recorded, probe)).toBe('reused');
    }
  });

  it('is previous-boot when the boot id differs, whatever /proc says', () => {
    const probe = fakeProbe({ stats: { [PID]: running }, bootId: 'another-boot' });
    expect(checkLiveness(recorded, probe)).toBe('previous-boot');
    expect(probe.statCalls).toEqual([]);
  });

  it('is other-host when the host differs, before anything else', () => {
    const probe = fakeProbe({ stats: { [PID]: running }, host: 'build-2', bootId: 'x' });
    expect(checkLiveness(recorded, probe)).toBe('other-host');
    expect(probe.statCalls).toEqual([]);
  });

  it('classifies malformed stat text as dead without throwing', () => {
    // Documented choice (liveness.ts): the kernel never writes such a line, so it can only be a
    // broken probe; it proves nothing about the recorded process, hence 'dead', not 'alive'.
    const malformed = [
      '',
      'garbage',
      `${PID} (claude`,
      `${PID} (claude) S 1 2 3`,
      statLine(PID, 'claude', 'S', 'abc'),
      statLine(PID + 1, 'claude', 'S', TICKS), // a line for another pid
    ];
    for (const text of malformed) {
      expect(checkLiveness(recorded, fakeProbe({ stats: { [PID]: text } })), text).toBe('dead');
    }
  });

  it('settles a pid reaped and reused while it is being looked at', () => {
    // First read: gone. kill(2): a process has the pid again. Second read: the new process.
    const probe = fakeProbe({
      stats: { [PID]: [null, statLine(PID, 'other', 'R', '999999')] },
      kill0s: { [PID]: 'exists' },
    });
    expect(checkLiveness(recorded, probe)).toBe('reused');
  });

  it('throws a clear error when kill(2) sees the pid but /proc hides it (hidepid=2)', () => {
    const probe = fakeProbe({ kill0s: { [PID]: 'eperm' } });
    expect(() => checkLiveness(recorded, probe)).toThrow(EngineError);
    expect(() => checkLiveness(recorded, probe)).toThrow(/hidepid/);
  });

  it('is dead for a recorded pid that names no single process, without signalling it', () => {
    for (const pid of [0, -1, -4242, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const probe = fakeProbe({ kill0s: { [pid]: 'exists' } });
      expect(checkLiveness({ ...recorded, pid }, probe), String(pid)).toBe('dead');
      expect(probe.kill0Calls).toEqual([]);
      expect(probe.statCalls).toEqual([]);
    }
  });
});

describe('readProcessIdentity / selfIdentity (injected probe)', () => {
  it('reads pid, start ticks, boot id and host', () => {
    const probe = fakeProbe({ stats: { [PID]: statLine(PID, '(a) b (c)', 'S', TICKS) } });
    expect(readProcessIdentity(PID, probe)).toEqual(recorded);
  });

  it('is null for a missing process, a malformed line and an invalid pid', () => {
    expect(readProcessIdentity(PID, fakeProbe())).toBeNull();
    expect(readProcessIdentity(PID, fakeProbe({ stats: { [PID]: 'junk' } }))).toBeNull();
    expect(readProcessIdentity(0, fakeProbe({ stats: { 0: running } }))).toBeNull();
  });

  it('selfIdentity reads this process and throws if it cannot', () => {
    const probe = fakeProbe({ stats: { [process.pid]: statLine(process.pid, 'node', 'R', '7') } });
    expect(selfIdentity(probe)).toEqual({
      pid: process.pid,
      startTicks: '7',
      bootId: BOOT,
      host: HOST,
    });
    expect(() => selfIdentity(fakeProbe())).toThrow(EngineError);
  });
});

describe('isAlive / describeLiveness', () => {
  const all: Liveness[] = ['alive', 'dead', 'zombie', 'reused', 'previous-boot', 'other-host'];

  it('only alive is alive', () => {
    expect(all.filter(isAlive)).toEqual(['alive']);
  });

  it('describes each result in one line naming the pid', () => {
    const probe = fakeProbe({ bootId: 'boot-now', host: 'host-now' });
    const lines = Object.fromEntries(all.map((l) => [l, describeLiveness(recorded, l, probe)]));
    expect(lines).toEqual({
      alive: 'pid 4242 is alive',
      dead: 'pid 4242 is gone',
      zombie: 'pid 4242 is a zombie (it exited and was not reaped yet)',
      reused: 'pid 4242 now belongs to another process (start time differs)',
      'previous-boot': `pid 4242 was recorded on boot ${BOOT}, this is boot boot-now`,
      'other-host': `pid 4242 was recorded on host ${HOST}, this is host host-now`,
    });
    for (const line of Object.values(lines)) expect(line).not.toContain('\n');
  });

  it('still describes when the probe cannot read the boot id', () => {
    const probe = {
      ...fakeProbe(),
      bootId: (): string => {
        throw new Error('no /proc');
      },
    };
    expect(describeLiveness(recorded, 'previous-boot', probe)).toBe(
      `pid 4242 was recorded on boot ${BOOT}, this is boot (unknown)`,
    );
  });
});
