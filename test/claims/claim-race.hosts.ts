/**
 * Raced claims through a real shared remote: 5 hosts, each its own clone and process, claim
 * the same 200 items in their own orders (1,000 attempts), then race to take each expired lease
 * over (1,000 more). Every item is claimed once and taken over once. It takes minutes on 2
 * cores: `npm run test:hosts` runs it, apart from `npm test`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterEach, expect, it } from 'vitest';
import { sharedRemote, type SharedRemote } from './git-remote.js';

const RACER = fileURLToPath(new URL('./claim-racer.ts', import.meta.url));
// tsx's own command runs the racer from source (never an older build in dist/).
const TSX = fileURLToPath(new URL('../../node_modules/tsx/dist/cli.mjs', import.meta.url));
const HOSTS = 5;
const ITEMS = 200;
const LEASE_MS = 300;

let remote: SharedRemote | undefined;
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  remote?.cleanup();
});

interface Report {
  phase: string;
  claimed?: string[];
  takenOver?: string[];
  odd: string[];
  seen?: number | null;
}

function startHost(repo: string, name: string, items: string[]) {
  const args = [TSX, RACER, repo, name, JSON.stringify(items), String(LEASE_MS)];
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (): Promise<Report> => {
    const line = await lines.next();
    if (line.done) throw new Error(`host ${name} ended early (exit ${child.exitCode})`);
    return JSON.parse(line.value) as Report;
  };
  return { child, next };
}

it('gives each of 200 items to exactly one of 5 racing hosts, and each takeover to one', async () => {
  remote = sharedRemote();
  const items = Array.from({ length: ITEMS }, (_, n) => `item-${n}`);
  const orders = fc.sample(fc.shuffledSubarray(items, { minLength: ITEMS }), {
    numRuns: HOSTS,
  });
  const hosts = orders.map((order, n) => startHost(remote!.host(`h${n}`), `h${n}`, order));
  const claimed = await Promise.all(hosts.map((h) => h.next()));
  const winners = claimed.flatMap((r) => r.claimed!);
  expect(claimed.flatMap((r) => r.odd)).toEqual([]);
  expect(winners.length).toBe(ITEMS);
  expect(new Set(winners).size).toBe(ITEMS);
  // Every host looks at the claims, then all wait out the lease together: a host that looked
  // only after another's takeover would see that new lease expire later, and take it again.
  for (const host of hosts) host.child.stdin!.write('look\n');
  await Promise.all(hosts.map((h) => h.next()));
  for (const host of hosts) host.child.stdin!.end('take\n');
  const taken = await Promise.all(hosts.map((h) => h.next()));
  expect(taken.flatMap((r) => r.odd)).toEqual([]);
  expect(taken.map((r) => r.seen)).toEqual(Array(HOSTS).fill(ITEMS));
  const takeovers = taken.flatMap((r) => r.takenOver!);
  expect(takeovers.length).toBe(ITEMS);
  expect(new Set(takeovers).size).toBe(ITEMS);
  const refs = remote.git(
    remote.bare,
    'for-each-ref',
    '--format=%(contents:body)',
    'refs/engine/claims/',
  );
  const attempts = refs
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => (JSON.parse(l) as { attempt: number }).attempt);
  expect(attempts).toEqual(Array(ITEMS).fill(2));
}, 600_000);
