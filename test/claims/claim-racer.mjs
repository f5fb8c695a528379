// One host of the claim race (claim-race.test.ts): claims every item it is given, in its order,
// then, after its leases could have expired, tries to take each over once. Reports on stdout.
import { GitClaimStore } from '../../dist/claims/git-claim-store.js';

const [repo, host, itemsJson, leaseMs] = process.argv.slice(2);
const items = JSON.parse(itemsJson);
const store = new GitClaimStore({
  repo,
  remote: 'origin',
  branch: 'main',
  me: { host, instance: `${host}-${process.pid}`, boot: 'test' },
  leaseMs: Number(leaseMs),
});
const claimed = [];
const odd = [];
for (const item of items) {
  const result = await store.claim(item, `sessions/${item}.md`, 'fix');
  if (result.won) claimed.push(item);
  else if (result.outcome.kind !== 'lost') odd.push(`${item}: ${JSON.stringify(result.outcome)}`);
}
// Wait on the signal from the test that every host has claimed, so no lease is renewed after.
process.stdout.write(`${JSON.stringify({ phase: 'claimed', claimed, odd })}\n`);
await new Promise((resolve) => process.stdin.once('data', resolve));
await store.refresh();
await new Promise((resolve) => setTimeout(resolve, Number(leaseMs) + 50));
const seen = await store.refresh();
const takenOver = [];
for (const claim of seen ?? []) {
  const result = await store.takeOver(claim);
  if (result.won) takenOver.push(claim.item);
  else if (!['lost', 'not-expired'].includes(result.outcome.kind)) {
    odd.push(`${claim.item}: ${JSON.stringify(result.outcome)}`);
  }
}
process.stdout.write(
  `${JSON.stringify({ phase: 'taken', takenOver, odd, seen: seen?.length ?? null })}\n`,
);
