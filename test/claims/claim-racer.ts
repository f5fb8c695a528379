// One host of the claim race (claim-race.test.ts), run from source: claims every item it is
// given, in its order; then, told to, looks at every claim; then, told again (once every host
// has looked), waits out a lease and tries to take each expired one over once. Reports on stdout.
import { createInterface } from 'node:readline';
import { GitClaimStore } from '../../src/claims/git-claim-store.js';

const [repo, host, itemsJson, leaseMs] = process.argv.slice(2) as [string, string, string, string];
const items = JSON.parse(itemsJson) as string[];
const store = new GitClaimStore({
  repo,
  remote: 'origin',
  branch: 'main',
  me: { host, instance: `${host}-${process.pid}`, boot: 'test' },
  leaseMs: Number(leaseMs),
});
const signals = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const report = (value: object) => process.stdout.write(`${JSON.stringify(value)}\n`);

const claimed: string[] = [];
const odd: string[] = [];
for (const item of items) {
  const result = await store.claim(item, `sessions/${item}.md`, 'fix');
  if (result.won) claimed.push(item);
  else if (result.outcome.kind !== 'lost') odd.push(`${item}: ${JSON.stringify(result.outcome)}`);
}
report({ phase: 'claimed', claimed, odd });
await signals.next();
await store.refresh();
report({ phase: 'observed' });
await signals.next();
await new Promise((resolve) => setTimeout(resolve, Number(leaseMs) * 2 + 50));
const seen = await store.refresh();
const takenOver: string[] = [];
for (const claim of seen ?? []) {
  const result = await store.takeOver(claim);
  if (result.won) takenOver.push(claim.item);
  else if (!['lost', 'not-expired'].includes(result.outcome.kind)) {
    odd.push(`${claim.item}: ${JSON.stringify(result.outcome)}`);
  }
}
report({ phase: 'taken', takenOver, odd, seen: seen?.length ?? null });
process.exit(0);
