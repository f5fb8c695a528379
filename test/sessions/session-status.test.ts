/**
 * The session state machine on real files: transitionSession creates and moves `.state.json` only
 * along the allowed transitions, from the status the record is in now, one transition at a time,
 * and appends each transition's event once; and it is the only writer of `.state.json`.
 */
import { readdir, readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventInput } from '../../src/sessions/event-log.js';
import { statePath, type SessionState } from '../../src/sessions/session-state.js';
import { isOpen, transitionSession } from '../../src/sessions/session-status.js';
import { craftedState } from '../helpers/crafted-state.js';

let dir: string;
let events: EventInput[];
const sink = async (event: EventInput) => {
  events.push(event);
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-session-status-'));
  events = [];
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const REF = 'sessions/2026_11_22_075000_FIX_req_0001';
const starting = () =>
  craftedState('/r', '/r/sessions/REQ.md', REF, {
    status: 'starting',
    startedAt: '2026-11-22T07:50:00.000Z',
    lastHeartbeat: null,
  }) as unknown as SessionState;
const record = async () => JSON.parse(await readFile(statePath(dir), 'utf8')) as SessionState;
const create = () => transitionSession(dir, null, 'starting', starting(), { events: sink });

describe('transitionSession', () => {
  it('creates the record once: a second creation is refused and writes nothing', async () => {
    expect(await create()).toMatchObject({ status: 'starting', sessionRef: REF });
    expect(await record()).toEqual(starting());
    await writeFile(statePath(dir), JSON.stringify({ ...starting(), attempt: 7 }));
    expect(await create()).toBeNull();
    expect((await record()).attempt).toBe(7);
  });

  it('patches the record as written and appends the event once, with the session named', async () => {
    await create();
    const written = await transitionSession(
      dir,
      ['starting', 'running'],
      'exited',
      { exitCode: 3, endedAt: '2026-11-22T08:00:00.000Z' },
      { events: sink, event: { event: 'exited', exitCode: 3 } },
    );
    expect(written).toEqual({
      ...starting(),
      status: 'exited',
      exitCode: 3,
      endedAt: '2026-11-22T08:00:00.000Z',
    });
    expect(await record()).toEqual(written);
    expect(events).toEqual([
      { event: 'exited', file: '/r/sessions/REQ.md', noun: 'fix', session: REF, exitCode: 3 },
    ]);
  });

  it('refuses a transition from a status the record is no longer in: no write, no event', async () => {
    await create();
    await transitionSession(dir, 'starting', 'abandoned', { reason: 'spawn failed' }, { events: sink });
    const before = await readFile(statePath(dir), 'utf8');
    const refused = await transitionSession(
      dir,
      ['starting', 'running'],
      'exited',
      { exitCode: 0 },
      { events: sink, event: { event: 'exited', exitCode: 0 } },
    );
    expect(refused).toBeNull();
    expect(await readFile(statePath(dir), 'utf8')).toBe(before);
    expect(events).toEqual([]);
    expect(await transitionSession(dir, 'running', 'abandoned', {}, { events: sink })).toBeNull();
  });

  it('refuses a record that names another request file now', async () => {
    await create();
    const moved = { events: sink, requestFile: '/r/sessions/OLD.md' };
    expect(await transitionSession(dir, 'starting', 'unchanged', { requestFile: '/x' }, moved)).toBeNull();
    const here = { events: sink, requestFile: '/r/sessions/REQ.md' };
    expect(
      await transitionSession(dir, 'starting', 'unchanged', { requestFile: '/r/NEW.md' }, here),
    ).toMatchObject({ status: 'starting', requestFile: '/r/NEW.md' });
  });

  it('throws on a transition the machine does not allow', () => {
    expect(() => transitionSession(dir, 'abandoned', 'running', {}, { events: sink })).toThrow(
      /from abandoned to running/,
    );
    expect(() => transitionSession(dir, ['running', 'exited'], 'starting', {}, { events: sink })).toThrow(
      /from running to starting/,
    );
  });

  it('runs one transition at a time: of four that race to end the session, one writes and records it', async () => {
    await create();
    const exit = () =>
      transitionSession(dir, ['starting', 'running'], 'exited', { exitCode: 0 }, {
        events: sink,
        event: { event: 'exited', exitCode: 0 },
      });
    const abandon = () =>
      transitionSession(dir, ['starting', 'running'], 'abandoned', { reason: 'gone' }, {
        events: sink,
        event: { event: 'exited', exitCode: null, reason: 'gone' },
      });
    const results = await Promise.all([exit(), abandon(), exit(), abandon()]);
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    expect(events).toHaveLength(1);
    expect((await record()).status).toBe(results[0]?.status);
  });
});

describe('isOpen', () => {
  it('is true while a wrapper or agent may still be followed', () => {
    expect(['starting', 'running', 'exited', 'abandoned'].filter((s) => isOpen(s as never))).toEqual(
      ['starting', 'running'],
    );
  });
});

describe('the one writer of .state.json', () => {
  it('is session-status.ts: each JSON record has its one writer, and no other module writes one', async () => {
    const src = fileURLToPath(new URL('../../src/', import.meta.url));
    const writers: string[] = [];
    for (const entry of await readdir(src, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const path = join(entry.parentPath, entry.name);
      if (/writeJsonAtomic|write-json-atomic/.test(await readFile(path, 'utf8'))) {
        writers.push(relative(src, path));
      }
    }
    expect(writers.sort()).toEqual([
      'agents/agent-state.ts', // <session>/agent-state.json, by the agent's hooks
      'agents/claude-settings.ts', // <session>/claude-settings.json, once at launch
      'daemon/no-work-record.ts', // sessions/.engine/no-work.json, after the first pass
      'files/write-json-atomic.ts',
      'init/init-manifest.ts', // directives/.engine-init.json, by engine init
      'init/upgrade-project.ts', // writeTextAtomic only: the command files it upgrades
      'sessions/limit-pause.ts', // sessions/.engine/pause.json
      'sessions/session-status.ts', // <session>/.state.json
    ]);
  });
});
