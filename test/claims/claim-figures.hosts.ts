/**
 * The many-hosts figures of docs/RELIABILITY.md ("Many hosts") measured on real daemons (the
 * built CLI, `--claims git`) over a bare remote on the same machine: how many pushes one host
 * makes when idle and while it runs agents (counted by the remote's hooks, push-log.ts), and
 * the claim latency from an approval landing on the shared branch to its `#claimed-fix` landing
 * there (both by the remote's clock). With ENGINE_RELIABILITY_FIGURES=<file>, each test appends
 * what it measured there.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import {
  DaemonHarness,
  events,
  release,
  TEST_TAGS_MD,
  waitForReady,
} from '../helpers/daemon-harness.js';
import { waitFor } from '../helpers/wait-for.js';
import { recordFigure } from '../reliability/support.js';
import { sharedRemote, type SharedRemote } from './git-remote.js';
import { logPushes, pushesOf, quantile } from './push-log.js';

let remote: SharedRemote | null = null;
const hosts: DaemonHarness[] = [];
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.close();
  remote?.cleanup();
  remote = null;
});

/** The remote with `count` requests waiting for approval, and its push log. */
function queueOf(count: number): { shared: SharedRemote; log: string } {
  const files: Record<string, string> = { 'directives/TAGS.md': TEST_TAGS_MD };
  for (let i = 1; i <= count; i++)
    files[`sessions/item-${i}.md`] = `# ${i}\n**Tags**: #needs-fix\n`;
  const shared = (remote = sharedRemote(files));
  return { shared, log: logPushes(shared.bare) };
}

/** A host: a clone with its own daemon (git claims, the given flags) and state directory. */
async function host(
  shared: SharedRemote,
  flags: string[],
  env: Record<string, string> = {},
): Promise<DaemonHarness> {
  const h = await DaemonHarness.open(['--claims', 'git', ...flags], shared.host('a'));
  hosts.push(h);
  await waitForReady(h.start([], { XDG_STATE_HOME: join(shared.dir, 'state-a'), ...env }), 60_000);
  return h;
}

/** A human approves `items` from its clone: one commit, pushed. */
function approve(shared: SharedRemote, human: string, items: number[]): void {
  shared.git(human, 'pull', '--quiet', '--rebase', 'origin', 'main');
  for (const i of items) {
    const file = join(human, 'sessions', `item-${i}.md`);
    writeFileSync(file, readFileSync(file, 'utf8').replace('#needs-fix', '#delegated-fix'));
  }
  shared.git(human, 'commit', '--quiet', '-am', `approve ${items.join(' ')}`);
  shared.git(human, 'push', '--quiet', 'origin', 'main');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const tail = (h: DaemonHarness): string => h.daemons[0]!.output().split('\n').slice(-30).join('\n');

it('one host pushes nothing when idle, and about one renewal per lease held per third of a lease', async () => {
  const agents = 3;
  const leaseMs = 6000;
  const windowMs = 30_000;
  const { shared, log } = queueOf(agents);
  const flags = ['--claims-fetch-ms', '500', '--claims-lease-ms', `${leaseMs}`];
  const a = await host(shared, flags, { TEST_AGENT_MODE: 'hold' });
  const pushes = () => pushesOf(log).tried.length;
  // Idle: the daemon fetches every fetch period, and pushes nothing.
  await sleep(windowMs);
  const idle = pushes();
  approve(shared, shared.host('human'), [1, 2, 3]);
  // Long deadlines: on a loaded 2-core machine an agent takes seconds to start.
  const held = await waitFor(() => a.agents().length === agents && a.agents(), {
    timeoutMs: 120_000,
    message: () => `3 agents; a:\n${tail(a)}`,
  });
  await waitFor(
    () =>
      pushesOf(log).landed.filter((l) => l.subject.startsWith('engine: claim')).length === agents,
    {
      timeoutMs: 120_000,
      message: () => `the 3 claims on the branch; a:\n${tail(a)}`,
    },
  );
  // Running agents: renewals only, each lease every third of a lease (jittered by a fifth).
  const before = pushes();
  const from = Date.now();
  await sleep(windowMs);
  const renewals = pushesOf(log).tried.slice(before);
  const measuredMs = Date.now() - from;
  const expected = (agents * measuredMs) / (leaseMs / 3);
  for (const start of held) await release(start.session);
  await waitFor(() => events(a.root).filter((e) => e.event === 'done').length === agents, {
    timeoutMs: 120_000,
    message: () => `the dones; a:\n${tail(a)}`,
  });
  // Every push after the approval (the human's one) is the host's.
  const after = pushesOf(log).tried.slice(idle + 1);
  recordFigure('hosts: pushes of one host', {
    leaseMs,
    fetchMs: 500,
    idleWindowMs: windowMs,
    idlePushes: idle,
    agents,
    runningWindowMs: measuredMs,
    runningPushes: renewals.length,
    expectedRenewals: expected,
    renewalRefs: renewals.every((p) => p.refs.every((r) => r.startsWith('refs/engine/claims/'))),
    hostPushes: after.length,
    branchPushes: after.filter((p) => p.refs.includes('refs/heads/main')).length,
  });
  expect(idle).toBe(0); // the seed was pushed before the hooks were installed
  expect(renewals.every((p) => p.refs.every((r) => r.startsWith('refs/engine/claims/')))).toBe(
    true,
  );
  // Each wait starts after the last renewal ended: a loaded machine renews less often (0.75 of
  // the bound at a load average of 25), and a lease renewed at half the rate still holds.
  expect(renewals.length).toBeGreaterThanOrEqual(expected * 0.5);
  expect(renewals.length).toBeLessThanOrEqual(expected * 1.2);
}, 600_000);

it.each([
  { fetchMs: 500, debounceMs: 300, samples: 10 },
  { fetchMs: 5000, debounceMs: 3000, samples: 10 },
])(
  'claim latency, approval landed to #claimed-fix landed (fetch every $fetchMs ms, debounce $debounceMs ms)',
  async ({ fetchMs, debounceMs, samples }) => {
    const { shared, log } = queueOf(samples);
    const flags = ['--claims-fetch-ms', `${fetchMs}`, '--debounce-ms', `${debounceMs}`];
    const a = await host(shared, flags);
    const human = shared.host('human');
    const latencies: number[] = [];
    for (let i = 1; i <= samples; i++) {
      approve(shared, human, [i]);
      await waitFor(() => events(a.root).filter((e) => e.event === 'done').length === i, {
        timeoutMs: 120_000,
        message: () => `item ${i} done; a:\n${tail(a)}`,
      });
      const { landed } = pushesOf(log);
      const approved = landed.find((l) => l.subject === `approve ${i}`)!.at;
      const claimed = landed.find((l) =>
        l.subject.startsWith(`engine: claim sessions/item-${i}.md `),
      )!.at;
      latencies.push(claimed - approved);
    }
    const figure = {
      p50: quantile(latencies, 0.5),
      p95: quantile(latencies, 0.95),
      max: quantile(latencies, 1),
    };
    recordFigure('hosts: claim latency', { fetchMs, debounceMs, samples, ...figure, latencies });
    // A claim waits for a fetch (at most a period and a fifth), the debounce, and its pushes:
    // seconds on a loaded 2-core machine (11.8 s at a load average of 25 to 30).
    expect(figure.max).toBeLessThan(fetchMs * 1.2 + debounceMs + 30_000);
  },
  900_000,
);
