/**
 * Daemons of several hosts sharing one queue through a git remote (`engine run --claims git`,
 * docs/MULTI-HOST.md), all real: a bare repository as the remote, a clone per host, each with
 * its own daemon (the built CLI), tmux server, state directory and the scriptable test agent.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DaemonHarness,
  events,
  isAlive,
  release,
  TEST_TAGS_MD,
  waitForReady,
  type AgentStart,
} from '../helpers/daemon-harness.js';
import { waitFor } from '../helpers/wait-for.js';
import { pushRebasing, sharedRemote, type SharedRemote } from './git-remote.js';

const LEASE_MS = 30_000;
const GIT_FLAGS = [
  '--claims',
  'git',
  '--claims-fetch-ms',
  '500',
  '--claims-lease-ms',
  `${LEASE_MS}`,
];

let remote: SharedRemote | null = null;
const hosts: DaemonHarness[] = [];

afterEach(async () => {
  for (const h of hosts.splice(0)) await h.close();
  remote?.cleanup();
  remote = null;
});

/** The remote, seeded with the dispatch table and `count` requests (approved, by default). */
function queueOf(count: number, tag = '#delegated-fix'): SharedRemote {
  const files: Record<string, string> = { 'directives/TAGS.md': TEST_TAGS_MD };
  for (let i = 1; i <= count; i++)
    files[`sessions/item-${i}.md`] = `# Item ${i}\n**Tags**: ${tag}\n`;
  remote = sharedRemote(files);
  return remote;
}

/** A host: a clone of the remote with its own daemon and state directory. */
async function host(
  shared: SharedRemote,
  name: string,
  flags: string[] = [],
  env: Record<string, string> = {},
): Promise<DaemonHarness> {
  const h = await DaemonHarness.open([...GIT_FLAGS, ...flags], shared.host(name));
  hosts.push(h);
  const state = join(shared.dir, `state-${name}`);
  await waitForReady(h.start([], { XDG_STATE_HOME: state, ...env }), 60_000);
  return h;
}

/** The request files' text on the remote's shared branch, by name. */
function onBranch(shared: SharedRemote, count: number): string[] {
  const texts: string[] = [];
  for (let i = 1; i <= count; i++)
    texts.push(shared.git(shared.bare, 'show', `main:sessions/item-${i}.md`));
  return texts;
}

/** The items whose agent's branch is on the remote (engine/...), by their work commits' subjects. */
function branchesOnRemote(shared: SharedRemote): string[] {
  const subjects = shared.git(
    shared.bare,
    'for-each-ref',
    '--format=%(contents:subject)',
    'refs/heads/engine/',
  );
  return subjects
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.replace(/^work on /, ''))
    .sort();
}

/** The item numbers whose request on the shared branch matches `pattern`: one git run. */
function itemsShowing(shared: SharedRemote, pattern: string): number[] {
  try {
    const out = shared.git(shared.bare, 'grep', '-l', '-E', pattern, 'main', '--', 'sessions/');
    return [...out.matchAll(/item-(\d+)\.md/g)].map((m) => Number(m[1]));
  } catch {
    return []; // git grep exits 1 when nothing matches
  }
}

/**
 * A human approves `items` from its own clone: one commit, pushed as a fast-forward (never
 * forced), rebased over the daemons' pushes when they came first.
 */
function approve(shared: SharedRemote, human: string, items: number[]): void {
  for (const i of items) {
    const file = join(human, 'sessions', `item-${i}.md`);
    writeFileSync(file, readFileSync(file, 'utf8').replace('#needs-fix', '#delegated-fix'));
  }
  shared.git(human, 'commit', '--quiet', '-am', `approve ${items.length} items`);
  pushRebasing(shared, human);
}

/** The end of a host's daemon log, for a failure's message. */
const tail = (h: DaemonHarness): string => h.daemons[0]!.output().split('\n').slice(-40).join('\n');

const nameOf = (start: AgentStart): string => start.file.split('/').pop() ?? '';

/** How often the takeover test looks at the claim's ref on the remote. */
const POLL_MS = 100;

describe('daemons of several hosts on one git remote', () => {
  it('run every approved item exactly once, each ending #done-fix on the shared branch with its branch on the remote', async () => {
    const count = 10;
    const shared = queueOf(count);
    const commit = { TEST_AGENT_COMMIT: '1' };
    const a = await host(shared, 'a', [], commit);
    const b = await host(shared, 'b', [], commit);
    const doneEvents = () =>
      [...events(a.root), ...events(b.root)].filter((e) => e.event === 'done');
    const finished = () =>
      onBranch(shared, count).every((t) => t.includes('#done-fix')) && doneEvents().length >= count;
    await waitFor(finished, {
      timeoutMs: 180_000,
      message: () => `every item done on the branch; a:\n${tail(a)}\nb:\n${tail(b)}`,
    });
    const starts = [...a.agents(), ...b.agents()].map(nameOf).sort();
    const names = Array.from({ length: count }, (_, i) => `item-${i + 1}.md`).sort();
    expect(starts).toEqual(names);
    expect(
      doneEvents()
        .map((e) => String(e.file).split('/').pop())
        .sort(),
    ).toEqual(names);
    // Both took part: neither host took the whole queue alone.
    expect(a.agents().length).toBeGreaterThan(0);
    expect(b.agents().length).toBeGreaterThan(0);
    for (const text of onBranch(shared, count)) expect(text).not.toContain('#claimed-fix');
    // Git claims watch with chokidar unless told otherwise (docs/MULTI-HOST.md, "The watch").
    for (const h of [a, b]) expect(h.daemons[0]!.output()).toMatch(/watching with chokidar/);
    // Each agent ran in its worktree of the shared branch, never in the human's tree, and its
    // branch reached the remote with its done.
    expect(branchesOnRemote(shared)).toEqual(names);
    for (const h of [a, b]) expect(existsSync(join(h.root, '.engine-worktrees'))).toBe(false);
  });

  // Under load this once saw a live host's lease run out while its done lost race after race
  // to other pushes: such a write now renews its lease between its tries.
  it('3 hosts run 60 items approved in bursts exactly once, each done on the shared branch with its branch on the remote', async () => {
    const count = 60;
    const burst = 15;
    const shared = queueOf(count, '#needs-fix');
    const commit = { TEST_AGENT_COMMIT: '1' };
    const hostsHere = [
      await host(shared, 'a', [], commit),
      await host(shared, 'b', [], commit),
      await host(shared, 'c', [], commit),
    ];
    const human = shared.host('human');
    const doneEvents = () =>
      hostsHere.flatMap((h) => events(h.root)).filter((e) => e.event === 'done');
    const logs = () => hostsHere.map((h, i) => `host ${i}:\n${tail(h)}`).join('\n');
    // The items not done: their text on the branch, and every host's log lines naming them.
    const missing = () => {
      const done = new Set(itemsShowing(shared, '#done-fix'));
      const texts = onBranch(shared, count);
      return Array.from({ length: count }, (_, i) => i + 1)
        .filter((i) => !done.has(i))
        .map((i) => {
          const said = hostsHere.flatMap((h, n) =>
            h.daemons[0]!.output()
              .split('\n')
              .filter((line) => line.includes(`item-${i}.md`) || line.includes(`item-${i}-`))
              .map((line) => `host ${n}: ${line}`),
          );
          return `item-${i}:\n${texts[i - 1]}\n${said.slice(-30).join('\n')}`;
        })
        .join('\n');
    };
    for (let first = 1; first <= count; first += burst) {
      const items = Array.from({ length: burst }, (_, i) => first + i);
      approve(shared, human, items);
      // The next burst lands while the daemons push this one's claims and dones.
      await waitFor(() => itemsShowing(shared, '#(claimed|done)-fix').some((i) => i >= first), {
        timeoutMs: 300_000,
        intervalMs: 250,
        message: () => `a claim of the burst from item ${first}; ${logs()}`,
      });
    }
    await waitFor(
      () => itemsShowing(shared, '#done-fix').length === count && doneEvents().length >= count,
      {
        timeoutMs: 600_000,
        intervalMs: 1000,
        message: () =>
          `every item done (${itemsShowing(shared, '#done-fix').length} on the branch, ${doneEvents().length} events); ${missing()}; ${logs()}`,
      },
    );
    const names = Array.from({ length: count }, (_, i) => `item-${i + 1}.md`).sort();
    expect(
      hostsHere
        .flatMap((h) => h.agents())
        .map(nameOf)
        .sort(),
    ).toEqual(names);
    expect(
      doneEvents()
        .map((e) => String(e.file).split('/').pop())
        .sort(),
    ).toEqual(names);
    for (const h of hostsHere) expect(h.agents().length).toBeGreaterThan(0);
    for (const text of onBranch(shared, count)) expect(text).not.toContain('#claimed-fix');
    expect(branchesOnRemote(shared)).toEqual(names);
    // The human's four commits are all on the shared branch: none was overwritten.
    const log = shared.git(shared.bare, 'log', '--format=%s', 'main');
    expect(log.split('\n').filter((s) => s === `approve ${burst} items`)).toHaveLength(
      count / burst,
    );
  }, 900_000);

  it('takes a killed host’s claim over only after its lease, with a Recovery entry, then runs it', async () => {
    const lease = 4000;
    const shared = queueOf(1);
    const short = ['--claims-lease-ms', `${lease}`];
    const a = await host(shared, 'a', short, { TEST_AGENT_MODE: 'hold' });
    await a.waitForAgents(1);
    const b = await host(shared, 'b', [...short, '--retries', '1', '--retry-backoff-ms', '0']);
    // The claim's ref on the remote, and when this test first saw each of its commits (watched
    // from a's claim on): a lease runs from a's last renewal, which may come before the kill by
    // up to a third of a lease.
    const claimRef = () =>
      shared.git(shared.bare, 'for-each-ref', '--format=%(objectname)', 'refs/engine/claims/');
    const firstSeen = new Map<string, number>();
    const poll = setInterval(() => {
      const commit = claimRef();
      if (!firstSeen.has(commit)) firstSeen.set(commit, Date.now());
    }, POLL_MS);
    try {
      // Alive and renewing, it keeps its claim over three leases: nothing runs on b.
      const claimedAt = Date.now();
      while (Date.now() - claimedAt < 3 * lease) {
        expect(onBranch(shared, 1)[0]).toContain('#claimed-fix');
        expect(b.agents()).toEqual([]);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      // Killed with -9, with its agent: its lease runs out, and b takes the item over.
      await a.close();
      hosts.splice(hosts.indexOf(a), 1);
      const lastOfA = claimRef();
      if (!firstSeen.has(lastOfA)) firstSeen.set(lastOfA, Date.now());
      await waitFor(() => b.agents().length === 1, {
        timeoutMs: 120_000,
        message: () => `b runs the item; b:\n${tail(b)}`,
      });
      // Seen up to POLL_MS after it landed: the takeover came a lease after a's last renewal.
      expect(Date.now() - firstSeen.get(lastOfA)!).toBeGreaterThanOrEqual(lease - POLL_MS);
    } finally {
      clearInterval(poll);
    }
    const [text] = onBranch(shared, 1);
    expect(text).toContain('## Recovery');
    expect(text).toMatch(/lease of .* ran out unrenewed \(attempt 1\); taken over as attempt 2/);
    await waitFor(() => onBranch(shared, 1)[0]!.includes('#done-fix'), {
      timeoutMs: 60_000,
      message: () => `done on the branch; b:\n${tail(b)}`,
    });
  });

  it('fences the late done of a partitioned host whose item was taken over: done once, its branch kept apart', async () => {
    const lease = 4000;
    const shared = queueOf(1);
    const short = ['--claims-lease-ms', `${lease}`];
    const agent = { TEST_AGENT_MODE: 'hold', TEST_AGENT_COMMIT: '1' };
    const a = await host(shared, 'a', short, agent);
    const [held] = await a.waitForAgents(1);
    const b = await host(
      shared,
      'b',
      [...short, '--retries', '1', '--retry-backoff-ms', '0'],
      agent,
    );
    // a's remote is a git daemon's port where nothing answers any more.
    const url = `git://127.0.0.1:${await deadPort()}/remote.git`;
    shared.git(a.root, 'remote', 'set-url', 'origin', url);
    await waitFor(() => b.agents().length === 1, {
      timeoutMs: 120_000,
      message: () => `b takes the item over; b:\n${tail(b)}`,
    });
    // Still cut off, a's agent marks done; a cannot publish it, and once back, it is fenced.
    await release(held!.session);
    await waitFor(() => /could not publish the done/.test(a.daemons[0]!.output()), {
      timeoutMs: 30_000,
      message: () => `a tries to publish; a:\n${tail(a)}`,
    });
    shared.git(a.root, 'remote', 'set-url', 'origin', shared.bare);
    await waitFor(() => /not counted: its lease moved on/.test(a.daemons[0]!.output()), {
      timeoutMs: 60_000,
      message: () => `a's late done fenced; a:\n${tail(a)}`,
    });
    expect(onBranch(shared, 1)[0]).not.toContain('#done-fix');
    // Its work is recorded under a name no one counts, never as the item's branch.
    expect(a.daemons[0]!.output()).toMatch(
      /its branch is kept on the remote as refs\/engine\/late\//,
    );
    const late = shared.git(
      shared.bare,
      'for-each-ref',
      '--format=%(contents:subject)',
      'refs/engine/late/',
    );
    expect(late.trim()).toBe('work on item-1.md');
    expect(branchesOnRemote(shared)).toEqual([]);
    await release(b.agents()[0]!.session);
    await waitFor(() => events(b.root).some((e) => e.event === 'done'), {
      timeoutMs: 60_000,
      message: () => `b's done; b:\n${tail(b)}`,
    });
    expect(onBranch(shared, 1)[0]).toContain('#done-fix');
    expect(branchesOnRemote(shared)).toEqual(['item-1.md']);
    expect(events(a.root).filter((e) => e.event === 'done')).toEqual([]);
    expect(events(b.root).filter((e) => e.event === 'done')).toHaveLength(1);
  });

  it('a host whose lease moved on and whose checkout then moved: its agent’s late mark is not counted, said, and the checkout keeps moving', async () => {
    const lease = 4000;
    const shared = queueOf(1);
    const short = ['--claims-lease-ms', `${lease}`];
    const agent = { TEST_AGENT_MODE: 'hold' };
    const a = await host(shared, 'a', short, agent);
    const [held] = await a.waitForAgents(1);
    const b = await host(
      shared,
      'b',
      [...short, '--retries', '1', '--retry-backoff-ms', '0'],
      agent,
    );
    shared.git(
      a.root,
      'remote',
      'set-url',
      'origin',
      `git://127.0.0.1:${await deadPort()}/remote.git`,
    );
    await waitFor(() => b.agents().length === 1, {
      timeoutMs: 120_000,
      message: () => `b takes the item over; b:\n${tail(b)}`,
    });
    // Back before its agent marks done: a's lease is lost, and its checkout moves to b's claim.
    shared.git(a.root, 'remote', 'set-url', 'origin', shared.bare);
    await waitFor(() => inCheckout(shared, 'a', 'sessions/item-1.md').includes('## Recovery'), {
      timeoutMs: 60_000,
      message: () => `a's checkout shows b's claim; a:\n${tail(a)}`,
    });
    await release(held!.session);
    await waitFor(
      () =>
        /changed by its agent after this host's lease of it moved on.*not counted/.test(
          a.daemons[0]!.output(),
        ),
      {
        timeoutMs: 60_000,
        message: () => `a says its agent's mark is not counted; a:\n${tail(a)}`,
      },
    );
    await release(b.agents()[0]!.session);
    // b's done reaches a's checkout: a's agent's mark did not stop it from moving.
    await waitFor(() => inCheckout(shared, 'a', 'sessions/item-1.md').includes('#done-fix'), {
      timeoutMs: 60_000,
      message: () => `a's checkout shows b's done; a:\n${tail(a)}`,
    });
    await waitFor(() => events(b.root).some((e) => e.event === 'done'), {
      timeoutMs: 60_000,
      message: () => `b's done; b:\n${tail(b)}`,
    });
    expect(events(a.root).filter((e) => e.event === 'done')).toEqual([]);
    expect(events(b.root).filter((e) => e.event === 'done')).toHaveLength(1);
  });

  it('resets a late write to a request whose lease ended, and keeps following the queue', async () => {
    const shared = queueOf(1);
    const a = await host(shared, 'a');
    const [first] = await a.waitForAgents(1);
    await waitFor(() => events(a.root).some((e) => e.event === 'done'), {
      timeoutMs: 60_000,
      message: () => `the first done; a:\n${tail(a)}`,
    });
    // The agent writes to its request after its done: no lease is behind that write any more.
    writeFileSync(first!.file, '# Item 1\n**Tags**: #done-fix\n\nA late note.\n');
    const human = shared.host('human');
    writeFileSync(join(human, 'sessions/item-2.md'), '# Item 2\n**Tags**: #delegated-fix\n');
    shared.git(human, 'add', '.');
    shared.git(human, 'commit', '-qm', 'approve item 2');
    shared.git(human, 'push', '-q', 'origin', 'main');
    await waitFor(() => a.agents().length === 2, {
      timeoutMs: 60_000,
      message: () => `a runs the item approved next; a:\n${tail(a)}`,
    });
    expect(a.daemons[0]!.output()).toMatch(
      /sessions\/item-1\.md was changed or deleted in the checkout/,
    );
    expect(readFileSync(first!.file, 'utf8')).not.toContain('A late note.');
  });

  it('a daemon restarted while its agent runs adopts its own lease, and counts the done once', async () => {
    const shared = queueOf(1);
    const env = {
      XDG_STATE_HOME: join(shared.dir, 'state-a'),
      TEST_AGENT_MODE: 'hold',
      TEST_AGENT_COMMIT: '1',
    };
    const a = await host(shared, 'a', [], env);
    const [held] = await a.waitForAgents(1);
    await a.daemons[0]!.stop();
    const again = a.start([], env);
    await waitForReady(again, 60_000);
    await release(held!.session);
    await waitFor(() => events(a.root).some((e) => e.event === 'done'), {
      timeoutMs: 60_000,
      message: () => `the done counted; a:\n${again.output()}`,
    });
    await waitFor(() => onBranch(shared, 1)[0]!.includes('#done-fix'), {
      timeoutMs: 30_000,
      message: () => `done on the branch; a:\n${again.output()}`,
    });
    expect(again.output()).toMatch(/earlier lease adopted as attempt 2/);
    // The adopted lease publishes the agent's branch with its done, as a claim of this start.
    expect(branchesOnRemote(shared)).toEqual(['item-1.md']);
    expect(a.agents()).toHaveLength(1);
    expect(events(a.root).filter((e) => e.event === 'done')).toHaveLength(1);
  });

  it('a daemon restarted after another host took its item over closes its agent, whose work cannot count', async () => {
    const lease = 4000;
    const shared = queueOf(1);
    const short = ['--claims-lease-ms', `${lease}`];
    const env = { XDG_STATE_HOME: join(shared.dir, 'state-a'), TEST_AGENT_MODE: 'hold' };
    const a = await host(shared, 'a', short, env);
    const [held] = await a.waitForAgents(1);
    // Stopped, not killed: its agent runs on, and its lease runs out; b takes the item over.
    await a.daemons[0]!.stop();
    const b = await host(shared, 'b', [...short, '--retries', '1', '--retry-backoff-ms', '0'], {
      TEST_AGENT_MODE: 'hold',
    });
    await waitFor(() => b.agents().length === 1, {
      timeoutMs: 120_000,
      message: () => `b takes the item over; b:\n${tail(b)}`,
    });
    expect(isAlive(held!.pid)).toBe(true);
    const again = a.start([], env);
    await waitForReady(again, 60_000);
    // Found superseded at two reaps in a row (30 s apart by default), then closed.
    await waitFor(() => !isAlive(held!.pid), {
      timeoutMs: 120_000,
      message: () => `a closes its superseded agent; a:\n${again.output()}`,
    });
    expect(again.output()).toMatch(
      /its item's lease is held by \S+ as attempt \d+, so its work cannot count: its agent is closed/,
    );
    const closing = events(a.root).filter((e) => e.event === 'agent-closing');
    const ref = `sessions/${held!.session.split('/').pop()}`;
    expect(closing.map((e) => [e.session, e.reason])).toEqual([[ref, 'superseded']]);
    // b's agent is untouched, and its done is the item's.
    expect(isAlive(b.agents()[0]!.pid)).toBe(true);
    await release(b.agents()[0]!.session);
    await waitFor(() => onBranch(shared, 1)[0]!.includes('#done-fix'), {
      timeoutMs: 60_000,
      message: () => `b's done on the branch; b:\n${tail(b)}`,
    });
    expect(events(a.root).filter((e) => e.event === 'done')).toEqual([]);
  });

  it('publishes the done of a request renamed on the branch while claimed at its new path', async () => {
    const shared = queueOf(1);
    const a = await host(shared, 'a', [], { TEST_AGENT_MODE: 'hold' });
    const [held] = await a.waitForAgents(1);
    await waitFor(() => onBranch(shared, 1)[0]!.includes('#claimed-fix'), { timeoutMs: 30_000 });
    const human = shared.host('human');
    shared.git(human, 'mv', 'sessions/item-1.md', 'sessions/renamed.md');
    shared.git(human, 'commit', '-qm', 'rename');
    shared.git(human, 'push', '-q', 'origin', 'main');
    // The agent, following its request, marks done at the new path in the checkout.
    await waitFor(() => /its claim moves with it/.test(a.daemons[0]!.output()), {
      timeoutMs: 30_000,
      message: () => `the move followed; a:\n${tail(a)}`,
    });
    const moved = join(dirname(held!.file), 'renamed.md');
    writeFileSync(moved, readFileSync(moved, 'utf8').replace('#claimed-fix', '#done-fix'));
    await waitFor(() => events(a.root).some((e) => e.event === 'done'), {
      timeoutMs: 60_000,
      message: () => `the done counted; a:\n${tail(a)}`,
    });
    const text = shared.git(shared.bare, 'show', 'main:sessions/renamed.md');
    expect(text).toContain('#done-fix');
    expect(text).not.toContain('#claimed-fix');
  });
});

/** A host's checkout of the shared branch (in its state directory): its copy of `path`. */
function inCheckout(shared: SharedRemote, name: string, path: string): string {
  const checkouts = join(shared.dir, `state-${name}`, 'engine', 'checkouts');
  const [dir] = readdirSync(checkouts);
  return readFileSync(join(checkouts, dir!, path), 'utf8');
}

/** A local port nothing listens on (it was just closed). */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
