/**
 * recordDone and settleDone in-process: evidence of completion belongs to the session's own
 * attempt. A `#done-X` under another session's line, or in a copy of the request, records nothing;
 * a session's own is recorded once, however often it is seen.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { recordDone, settleDone } from '../../src/daemon/record-done.js';
import type { EventInput } from '../../src/sessions/event-log.js';
import { createSessionDir, newSessionRef } from '../../src/sessions/session-dir.js';
import { isSessionDone } from '../../src/sessions/session-markers.js';
import { statePath, type SessionState } from '../../src/sessions/session-state.js';
import { craftedState } from '../helpers/crafted-state.js';
import { inProcessContext } from '../helpers/in-process-context.js';

let root: string | undefined;
afterEach(async () => {
  if (root) await rm(root, { recursive: true, force: true });
  root = undefined;
});

/** A running session of #fix on REQ.md, and a context that keeps the events it records. */
async function session() {
  root = await mkdtemp(join(tmpdir(), 'engine-record-done-'));
  const file = join(root, 'sessions', 'REQ.md');
  const ref = newSessionRef('fix', file, new Date());
  const dir = await createSessionDir(root, ref);
  const state = craftedState(root, file, ref, {}) as unknown as SessionState;
  await writeFile(statePath(dir), JSON.stringify(state));
  const events: EventInput[] = [];
  const ctx = inProcessContext(root, {
    recordEvent: async (event) => {
      events.push(event);
    },
  });
  return { file, ref, dir, state, events, ctx };
}

const request = (tags: string, ref: string) =>
  `# R\n**Tags**: ${tags}\n**Session**: ${ref}\n\nHuman text.\n`;

describe('the done of a session', () => {
  it('is recorded once for its own #done-X, however often it is seen', async () => {
    const { file, ref, dir, state, events, ctx } = await session();
    await writeFile(file, request('#done-fix', ref));
    await settleDone(ctx, [{ dir, state }]);
    expect(await recordDone(ctx, { file, noun: 'fix', session: ref })).toBe(false);
    await settleDone(ctx, [{ dir, state }]);
    expect(events).toEqual([{ event: 'done', file, noun: 'fix', session: ref }]);
    expect(await isSessionDone(dir)).toBe(true);
  });

  it('is not recorded for a #done-X under a later claim’s Session line', async () => {
    const { file, dir, state, events, ctx } = await session();
    const later = newSessionRef('fix', file, new Date(Date.now() + 1000));
    await writeFile(file, request('#done-fix', later));
    await settleDone(ctx, [{ dir, state }]);
    expect(events).toEqual([]);
    expect(await isSessionDone(dir)).toBe(false);
  });

  it('is not recorded for the #done-X of a copy of its request', async () => {
    const { file, ref, dir, events, ctx } = await session();
    await writeFile(file, request('#claimed-fix', ref));
    const copy = join(root!, 'sessions', 'COPY.md');
    await writeFile(copy, request('#done-fix', ref));
    expect(await recordDone(ctx, { file: copy, noun: 'fix', session: ref })).toBe(false);
    expect(events).toEqual([]);
    expect(await isSessionDone(dir)).toBe(false);
  });
});
