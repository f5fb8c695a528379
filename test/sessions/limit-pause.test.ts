import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait-for.js';
import {
  admission,
  extendedPause,
  readPause,
  removePause,
  updatePause,
  withPauseLock,
  type LimitPause,
} from '../../src/sessions/limit-pause.js';

const NOW = new Date('2026-11-24T10:00:00.000Z');
const at = (ms: number) => new Date(NOW.getTime() + ms);
const pause = (until: Date, probe?: LimitPause['probe']): LimitPause => ({
  until: until.toISOString(),
  reason: 'usage limit',
  since: NOW.toISOString(),
  ...(probe ? { probe } : {}),
});

describe('the pause decisions', () => {
  it('admits when not paused, holds until the reset, then lets one probe go, then holds for it', () => {
    expect(admission(null, NOW)).toEqual({ kind: 'go' });
    expect(admission(pause(at(5000)), NOW)).toEqual({ kind: 'hold', until: at(5000) });
    expect(admission(pause(at(5000)), at(5000))).toEqual({ kind: 'probe' });
    const probing = pause(at(5000), { file: '/f.md', noun: 'fix', since: at(5000).toISOString() });
    expect(admission(probing, at(6000))).toEqual({ kind: 'hold', until: null });
  });

  it('extends only to a later reset, dropping the probe; an earlier one changes nothing', () => {
    const probing = pause(at(5000), { file: '/f.md', noun: 'fix', since: NOW.toISOString() });
    expect(extendedPause(probing, at(4000), 'r', NOW)).toBeNull();
    expect(extendedPause(probing, at(9000), 'r', at(6000))).toEqual({
      until: at(9000).toISOString(),
      reason: 'r',
      since: NOW.toISOString(),
    });
    expect(extendedPause(null, at(9000), 'r', NOW)?.since).toBe(NOW.toISOString());
  });
});

describe('pause.json', () => {
  it('survives as a file, serializes concurrent changes, and is removed whole', async () => {
    const root = await mkdtemp(join(tmpdir(), 'engine-pause-'));
    try {
      expect(await readPause(root)).toBeNull();
      await Promise.all(
        [3000, 9000, 5000].map((ms) =>
          updatePause(root, (current) => extendedPause(current, at(ms), `r${ms}`, NOW) ?? undefined),
        ),
      );
      expect(await readPause(root)).toMatchObject({ until: at(9000).toISOString(), reason: 'r9000' });
      expect((await removePause(root))?.until).toBe(at(9000).toISOString());
      expect(await readPause(root)).toBeNull();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('takes the lock another process holds before removing: a change read before is never written back over a resume', async () => {
    const root = await mkdtemp(join(tmpdir(), 'engine-pause-'));
    try {
      await updatePause(root, () => ({ until: at(9000).toISOString(), reason: 'r', since: 'x' }));
      let removed: Promise<LimitPause | null> | null = null;
      let done = false;
      // The daemon's read-modify-write, held open: `engine resume` waits for it, then removes.
      await withPauseLock(root, async () => {
        removed = removePause(root);
        void removed.then(() => (done = true));
        // Given a second to finish, it must not: it waits for the lock.
        const early = await waitFor(() => done, { timeoutMs: 1000 }).then(
          () => true,
          () => false,
        );
        expect(early).toBe(false);
        expect(await readPause(root)).not.toBeNull();
      });
      expect((await removed!)?.reason).toBe('r');
      expect(await readPause(root)).toBeNull();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
