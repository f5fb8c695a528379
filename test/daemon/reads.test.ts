/**
 * What the daemon reads of a request between settle and spawn, in-process: one read per decision
 * (the snapshot travels with the item to admission and launch), plus the compare-and-swap's own
 * read, which makes the claim only over the text the item was read from.
 */
import { statSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon/daemon.js';
import { noWorkRecordPath, RACY_MS } from '../../src/daemon/no-work-record.js';
import { readRequestFile, type SeenStats } from '../../src/files/read-text-file.js';
import type { AgentLaunch, Runner } from '../../src/runners/runner.js';
import { resolveSessionRef } from '../../src/sessions/session-dir.js';
import { readSessionState } from '../../src/sessions/session-state.js';
import { claimEdit, requeueEdit, sessionReference } from '../../src/tags/lifecycle-edits.js';
import { requestDigest } from '../../src/tags/request-digest.js';
import { inProcessContext } from '../helpers/in-process-context.js';
import { waitFor } from '../helpers/wait-for.js';
import { fakeProbe } from '../process/fake-probe.js';

const ROUTE = { noun: 'fix', skill: '/fix', mode: 'agent', priority: 3, dispatchable: true };
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/**
 * A running daemon (no watch: reconcile passes only) counting the reads of each request, and
 * naming those read with their stat asked for (`withStat`); `afterRead` runs after each read.
 */
async function countingDaemon({
  rescanIntervalMs = 60_000,
  afterRead = (_path: string): void => undefined,
  root = '',
  clockAheadMs = 0,
} = {}) {
  if (!root) {
    root = await mkdtemp(join(tmpdir(), 'engine-reads-'));
    await mkdir(join(root, 'sessions'));
  }
  const reads = new Map<string, number>();
  const withStat = new Set<string>();
  /** The reads of each request when its agent was spawned. */
  const atSpawn = new Map<string, number>();
  const runner = {
    kind: 'tmux',
    launch: async (request: AgentLaunch) => {
      const file = request.env.ENGINE_REQUEST_FILE ?? '';
      atSpawn.set(file.split('/').pop() ?? '', reads.get(file) ?? 0);
      return { pid: 1, windowName: request.name, target: '%1' };
    },
    close: async () => undefined,
  } as unknown as Runner;
  const ctx = inProcessContext(root, {
    options: { debounceMs: 0, pollMs: 60_000, reapIntervalMs: 60_000, rescanIntervalMs },
    routes: {
      route: () => ROUTE,
      cap: () => undefined,
      watch: () => undefined,
      close: async () => undefined,
    },
    runner,
    probe: fakeProbe(),
    now: () => new Date(Date.now() + clockAheadMs),
    readRequest: ((path: string, needles?: readonly string[], seen?: SeenStats) => {
      reads.set(path, (reads.get(path) ?? 0) + 1);
      if (seen) withStat.add(path.split('/').pop() ?? '');
      const read = needles ? readRequestFile(path, needles, seen) : readRequestFile(path);
      afterRead(path);
      return read;
    }) as typeof readRequestFile,
  });
  const daemon = new Daemon(ctx);
  cleanups.push(async () => {
    await daemon.stop();
    await rm(root, { recursive: true, force: true });
  });
  return {
    root,
    daemon,
    reads,
    atSpawn,
    withStat,
    file: (name: string) => join(root, 'sessions', name),
  };
}

/** A request sent back for a retry, not to be claimed before `notBefore`. */
function retry(notBefore: number, body = ''): string {
  const session = 'sessions/2026_11_24_030000_FIX_x_abcd';
  const claimed = claimEdit(`# R\n**Tags**: #delegated-fix\n${body}`, 'fix', session);
  return requeueEdit(claimed, 'fix', session, {
    date: new Date(notBefore - 60_000).toISOString(),
    reason: 'agent exited with code 1',
    priorSession: `${session}/`,
    attempt: 1,
    back: 'delegated',
    notBefore: new Date(notBefore).toISOString(),
  });
}

describe('the reads of a request between settle and spawn', () => {
  it('are one per decision: a ready item, and a retry parked until its Not Before', async () => {
    const d = await countingDaemon();
    await writeFile(d.file('A.md'), '# A\n**Tags**: #delegated-fix\n');
    await writeFile(d.file('R.md'), retry(Date.now() + 700));
    await d.daemon.start();
    await waitFor(() => d.atSpawn.size === 2, { message: 'both spawned' });
    // Read once by the first pass each; the retry woke on time without a second read.
    expect(Object.fromEntries(d.atSpawn)).toEqual({ 'A.md': 1, 'R.md': 1 });
  });

  it("refuses a claim over a text that is not the snapshot's, and claims it from a new read", async () => {
    const d = await countingDaemon();
    await writeFile(d.file('R.md'), retry(Date.now() + 700));
    await d.daemon.start();
    // A human edits it while it waits; no watch sees it (reconcile passes only).
    const edited = retry(Date.now() + 700, '\nA human note.\n').replace(
      /\*\*Not Before\*\*:[^\n]*/,
      (await readFile(d.file('R.md'), 'utf8')).match(/\*\*Not Before\*\*:[^\n]*/)?.[0] ?? '',
    );
    await writeFile(d.file('R.md'), edited);
    await waitFor(() => d.atSpawn.has('R.md'), { message: 'R.md spawned' });
    expect(d.atSpawn.get('R.md')).toBe(2);
    const claimed = await readFile(d.file('R.md'), 'utf8');
    expect(claimed).toContain('A human note.');
    const dir = resolveSessionRef(d.root, sessionReference(claimed) ?? '') ?? '';
    const record = await readSessionState(dir);
    // The session starts from what the human wrote: the digest of the edited text.
    expect('state' in record && record.state.requestDigest).toBe(requestDigest(edited));
  });
});

describe("the first pass's reads", () => {
  it('read every file once, the stat the pass keeps taken from that read (no stat of its own)', async () => {
    const d = await countingDaemon();
    await writeFile(d.file('A.md'), '# A\n**Tags**: #delegated-fix\n');
    await writeFile(d.file('N.md'), '# N\n**Tags**: #needs-fix\n');
    await d.daemon.start();
    await waitFor(() => d.atSpawn.size === 1, { message: 'A.md spawned' });
    expect(Object.fromEntries(d.atSpawn)).toEqual({ 'A.md': 1 });
    expect([...d.withStat].sort()).toEqual(['A.md', 'N.md']);
  });

  it("after a restart, read only the files changed since the last first pass or holding the needles' bytes (the no-work record)", async () => {
    // Files written RACY_MS ago and more, as the daemon's clock sees them: recorded.
    const first = await countingDaemon({ clockAheadMs: 2 * RACY_MS });
    const body = (line: string): string => `# M\n**Tags**: ${line.padEnd(20)}\n`;
    await writeFile(first.file('N.md'), '# N\n**Tags**: #needs-fix\n');
    await writeFile(first.file('M.md'), body('#needs-fix'));
    // Whole seconds, so that utimes can put M.md's mtime back exactly.
    utimesSync(first.file('M.md'), 1_000_000_000, 1_000_000_000);
    // The needles' bytes, though no work: never recorded, read by every first pass.
    await writeFile(first.file('D.md'), '# D\n\nThe word delegated-fix, in prose.\n');
    await writeFile(first.file('C.md'), '# C\n\n`#claimed-fix` in code.\n');
    await first.daemon.start();
    await first.daemon.stop();
    const record = JSON.parse(await readFile(noWorkRecordPath(first.root), 'utf8')) as {
      dirs: Record<string, unknown[]>;
    };
    const names = record.dirs[`${join(first.root, 'sessions')}/`]?.filter(
      (x) => typeof x === 'string',
    );
    expect(names?.sort()).toEqual(['M.md', 'N.md']);

    // Work written into M.md in place, its size and mtime put back: only its ctime moved.
    const before = statSync(first.file('M.md'));
    await waitFor(() => {
      writeFileSync(first.file('M.md'), body('#delegated-fix'));
      return statSync(first.file('M.md')).ctimeMs !== before.ctimeMs;
    });
    utimesSync(first.file('M.md'), 1_000_000_000, 1_000_000_000);
    const after = statSync(first.file('M.md'));
    expect([after.ino, after.size, after.mtimeMs]).toEqual([
      before.ino,
      before.size,
      before.mtimeMs,
    ]);
    const second = await countingDaemon({ root: first.root, clockAheadMs: 2 * RACY_MS });
    await second.daemon.start();
    await waitFor(() => second.atSpawn.has('M.md'), { message: 'M.md spawned' });
    expect(second.reads.get(second.file('N.md'))).toBeUndefined();
    for (const name of ['M.md', 'D.md', 'C.md'])
      expect(second.reads.get(second.file(name))).toBeGreaterThan(0);
  });

  it("miss no write made just after a file's read: the stat the pass keeps is from before it", async () => {
    let written = false;
    const d = await countingDaemon({
      rescanIntervalMs: 200,
      afterRead: (path) => {
        if (written || !path.endsWith('N.md')) return;
        written = true;
        writeFileSync(path, '# N\n**Tags**: #delegated-fix\n\nReady now.\n');
      },
    });
    await writeFile(d.file('N.md'), '# N\n**Tags**: #needs-fix\n');
    await d.daemon.start();
    expect(written).toBe(true);
    // The first pass read it without work; the next pass finds it changed since its stat.
    await waitFor(() => d.atSpawn.has('N.md'), { message: 'N.md spawned' });
  });
});
