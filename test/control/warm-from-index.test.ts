/**
 * The daemon's status warm-up takes each file's findings from the index's build, which read the
 * file already (one read for both): what it keeps must be what a status keeps from its own read.
 * Real files, the real index and scan pool, the daemon's scan (the fast path, else the pool).
 */
import { link, mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StatusCache } from '../../src/control/status-cache.js';
import { seenFilesOf } from '../../src/control/warm-from-build.js';
import type { DispatchTable } from '../../src/dispatch/dispatch-table.js';
import { TagIndex, type TextRead } from '../../src/index/tag-index.js';
import { collectStatus } from '../../src/status/collect-status.js';
import { scanTagsFast } from '../../src/tags/scan-fast.js';
import { ScanPool, summaryOf } from '../../src/tags/scan-pool.js';
import { systemProbe } from '../../src/process/process-identity.js';

let dir: string | undefined;
let pool: ScanPool | undefined;
afterEach(async () => {
  await pool?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
  pool = undefined;
});

const TABLE: DispatchTable = new Map([
  ['fix', { noun: 'fix', skill: '/fix', mode: 'agent', priority: 3, dispatchable: true }],
]);
const NOW = new Date('2026-11-26T12:00:00.000Z');
const JUDGING = {
  now: NOW,
  options: { claimGraceMs: 60_000, staleAfterMs: 45 * 60_000 },
  debounceMs: 0,
  maxAgents: 0,
  agingMs: 0,
  probe: systemProbe,
};

const FILES: Record<string, string> = {
  'needs.md': '# Needs\n\n**Tags**: #needs-review #P1\n',
  'next.md': '# Next one\n\n**Tags**: #next-fix\n',
  'plain.md': '# Plain\n\nProse #topic only.\n',
  'waiting.md': '# Waiting\n\n**Tags**: #delegated-fix\n',
  'claimed.md': '# Claimed\n\n**Tags**: #claimed-fix\n',
  'front.md': '---\ntags: [needs-review]\n---\n# Front\n',
  'linked.md': '# Linked\n\n**Tags**: #needs-review\n',
  'untagged.md': '# None\n\nno tag\n',
  // A lone carriage return: the fast path declines the text, the daemon's scan reads it.
  'declined.md': '# Declined\r\r**Tags**: #needs-review\n',
};

describe('the status warm-up from the index build', () => {
  it.each([
    ['its own directory', false],
    ['a symlink to its directory', true],
  ])(
    "keeps for each file what a status keeps from its own read, from the build's one read (root: %s)",
    async (_, throughLink) => {
      dir = await mkdtemp(join(tmpdir(), 'engine-warm-'));
      const real = join(dir, 'real');
      await mkdir(real);
      for (const [name, text] of Object.entries(FILES)) await writeFile(join(real, name), text);
      await link(join(real, 'linked.md'), join(real, 'linked-too.md'));
      const root = throughLink ? join(dir, 'link') : real;
      if (throughLink) await symlink(real, root);
      const scanPool = (pool = new ScanPool());
      const scan = async (text: string) => {
        const fast = scanTagsFast(text);
        return fast ? summaryOf(fast, text) : scanPool.scan(text);
      };
      const index = new TagIndex([root], scan, () => true);
      const fromBuild = new StatusCache((path) => index.isTagged(path)).under('key');
      const warm = seenFilesOf({ root, table: TABLE, judging: JUDGING, cache: fromBuild, scan });
      const seen: Array<[string, TextRead]> = [];
      await index.build((path) => {
        const keep = warm(path);
        return async (read) => {
          seen.push([path, read]);
          await keep(read);
        };
      });

      const tagged = Object.keys(FILES).filter((name) => name !== 'untagged.md');
      expect(seen.map(([path]) => path).sort()).toEqual(
        [...tagged, 'linked-too.md'].map((name) => join(root, name)).sort(),
      );
      for (const [path, read] of seen) {
        const info = await stat(path);
        const name = path.slice(root.length + 1);
        const text = FILES[name] ?? FILES['linked.md'];
        const { scan: built, ...rest } = read;
        expect(rest).toEqual({ text, mtimeMs: info.mtimeMs, nlink: info.nlink });
        // The build's fast scan of the text, taken instead of a second one; none when the
        // fast path declined it (the warm-up asks the daemon's scan then).
        if (name === 'declined.md') expect(built).toBeNull();
        else expect(built?.occurrences).toEqual(scanTagsFast(text as string)?.occurrences);
      }

      const ownRead = new StatusCache((path) => index.isTagged(path)).under('key');
      await collectStatus(root, [root], TABLE, JUDGING, { scan, cache: ownRead });
      const kept = (cache: typeof ownRead) =>
        seen.map(([path]) => [path.slice(root.length + 1), cache.get(path) ?? null]);
      expect(kept(fromBuild)).toEqual(kept(ownRead));
      // Kept: needs, next, plain, front, declined; not the waiting, the claimed or the
      // hard-linked files.
      expect(kept(fromBuild).filter(([, found]) => found !== null)).toHaveLength(5);
      // Named by their real paths, as a status names them.
      const named = JSON.stringify(kept(fromBuild));
      if (throughLink) expect(named).not.toContain(root + '/');
      expect(named).toContain(real + '/');
    },
  );
});
