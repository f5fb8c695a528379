/**
 * Daemons of several hosts sharing one queue through a git remote (`engine run --claims git`,
 * docs/MANY-HOSTS.md), all real: a bare repository as the remote, a clone per host, each with
 * its own daemon (the built CLI), tmux server, state directory and the scriptable test agent.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DaemonHarness,
  events,
  TEST_TAGS_MD,
  waitForReady,
  type AgentStart,
} from '../helpers/daemon-harness.js';
import { waitFor } from '../helpers/wait-for.js';
import { sharedRemote, type SharedRemote } from './git-remote.js';

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

/** The remote, seeded with the dispatch table and `count` approved requests. */
function queueOf(count: number): SharedRemote {
  const files: Record<string, string> = { 'directives/TAGS.md': TEST_TAGS_MD };
  for (let i = 1; i <= count; i++)
    files[`sessions/item-${i}.md`] = `# Item ${i}\n**Tags**: #delegated-fix\n`;
  remote = sharedRemote(files);
  return remote;
}

/** A host: a clone of the remote with its own daemon and state directory. */
async function host(shared: SharedRemote, name: string): Promise<DaemonHarness> {
  const h = await DaemonHarness.open(GIT_FLAGS, shared.host(name));
  hosts.push(h);
  await waitForReady(h.start([], { XDG_STATE_HOME: join(shared.dir, `state-${name}`) }), 60_000);
  return h;
}

/** The request files' text on the remote's shared branch, by name. */
function onBranch(shared: SharedRemote, count: number): string[] {
  const texts: string[] = [];
  for (let i = 1; i <= count; i++)
    texts.push(shared.git(shared.bare, 'show', `main:sessions/item-${i}.md`));
  return texts;
}

/** The end of a host's daemon log, for a failure's message. */
const tail = (h: DaemonHarness): string => h.daemons[0]!.output().split('\n').slice(-40).join('\n');

const nameOf = (start: AgentStart): string => start.file.split('/').pop() ?? '';

describe('daemons of several hosts on one git remote', () => {
  it('run every approved item exactly once, each ending #done-fix on the shared branch', async () => {
    const count = 10;
    const shared = queueOf(count);
    const a = await host(shared, 'a');
    const b = await host(shared, 'b');
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
  });
});
