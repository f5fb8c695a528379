/**
 * The Max column of §TAG_DISPATCH with the real daemon, tmux and the test agent: a noun's cap
 * holds under a burst while another noun runs beside it, and an agent adopted at start counts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  events,
  release,
  tagsOf,
  useDaemonHarness,
  waitForReady,
  waitForTag,
  type AgentStart,
} from '../helpers/daemon-harness.js';
import { waitFor } from '../helpers/wait-for.js';

const TAGS = `# Tags

## §TAG_DISPATCH

| Tag | Skill | Mode | Priority | Daemon | Max |
|-----|-------|------|----------|--------|-----|
| \`#delegated-research\` | \`/research\` | agent | 2 | yes | 1 |
| \`#delegated-fix\` | \`/fix\` | agent | 3 | yes | |
`;

const h = useDaemonHarness();

/** How many request files carry `#claimed-<noun>` now. */
function claimedNow(noun: string): number {
  return readdirSync(h.sessions)
    .filter((name) => name.endsWith('.md'))
    .filter((name) =>
      tagsOf(readFileSync(join(h.sessions, name), 'utf8')).includes(`#claimed-${noun}`),
    ).length;
}

/** The most claims of `noun` open at once in the event log, from `claimed` to `done`. */
function mostAtOnce(root: string, noun: string): number {
  let open = 0;
  let most = 0;
  for (const e of events(root).filter((e) => e.noun === noun)) {
    if (e.event === 'claimed') most = Math.max(most, ++open);
    if (e.event === 'done') open--;
  }
  return most;
}

const researchAgents = (): AgentStart[] => h.agents().filter((a) => a.noun === 'research');

describe('per-noun caps (the Max column)', () => {
  it('a Max of 1 holds under a burst of its noun while another noun runs beside it', async () => {
    await writeFile(join(h.root, 'directives', 'TAGS.md'), TAGS);
    const d = h.start(['--max-agents', '4'], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    // Sampled all along: a second claim of the capped noun, however brief, is seen.
    let most = 0;
    const sampler = setInterval(() => {
      try {
        most = Math.max(most, claimedNow('research'));
      } catch {
        // a file renamed under the read: the next sample sees it
      }
    }, 20);
    try {
      const research = await Promise.all(
        [1, 2, 3, 4, 5, 6].map((i) =>
          h.request(`R${i}.md`, `# Research ${i}\n**Tags**: #delegated-research\n`),
        ),
      );
      const fixes = await Promise.all(
        [1, 2].map((i) => h.request(`F${i}.md`, `# Fix ${i}\n**Tags**: #delegated-fix\n`)),
      );
      // Both fixes run while the first research agent is held: the cap is that noun's alone.
      await waitFor(
        () =>
          h.agents().filter((a) => a.noun === 'fix').length === 2 && researchAgents().length > 0,
        { timeoutMs: 60_000, message: () => `two fix agents and a research one; ${d.output()}` },
      );
      expect(researchAgents()).toHaveLength(1);
      for (const fix of h.agents().filter((a) => a.noun === 'fix')) await release(fix.session);
      // Release each research agent in turn; the next starts only after the one before is done.
      for (let n = 1; n <= 6; n++) {
        const started = await waitFor(() => researchAgents().length === n && researchAgents(), {
          timeoutMs: 60_000,
          message: () => `research agent ${n}; ${d.output()}`,
        });
        expect(claimedNow('research')).toBe(1);
        // The rest wait approved, unclaimed.
        const waiting = research.filter((f) =>
          tagsOf(readFileSync(f, 'utf8')).includes('#delegated-research'),
        );
        expect(waiting).toHaveLength(6 - n);
        await release((started.at(-1) as AgentStart).session);
      }
      for (const file of [...research, ...fixes])
        await waitForTag(file, ['#done-research', '#done-fix'], 60_000);
    } finally {
      clearInterval(sampler);
    }
    expect(most).toBe(1);
    expect(mostAtOnce(h.root, 'research')).toBe(1);
    expect(mostAtOnce(h.root, 'fix')).toBe(2);
    expect(researchAgents()).toHaveLength(6);
  });

  it('a Max raised in a reloaded table lets a held item go at once', async () => {
    const tags = join(h.root, 'directives', 'TAGS.md');
    await writeFile(tags, TAGS);
    const d = h.start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const a = await h.request('A.md', '# A\n**Tags**: #delegated-research\n');
    const b = await h.request('B.md', '# B\n**Tags**: #delegated-research\n');
    await waitFor(() => /held .*#delegated-research: Max 1/.test(d.output()), {
      timeoutMs: 30_000,
      message: () => `an item held by the cap; ${d.output()}`,
    });
    const [first] = await h.waitForAgents(1);
    const held = first?.file === a ? b : a;
    expect(tagsOf(readFileSync(held, 'utf8'))).toContain('#delegated-research');
    await writeFile(tags, TAGS.replace('| yes | 1 |', '| yes | 2 |'));
    // The first agent is still held: only the new Max can start the second.
    const started = await h.waitForAgents(2);
    for (const agent of started) await release(agent.session);
    for (const file of [a, b]) await waitForTag(file, ['#done-research'], 60_000);
  });

  it('an agent adopted at start counts against its noun’s Max', async () => {
    await writeFile(join(h.root, 'directives', 'TAGS.md'), TAGS);
    const first = h.start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(first);
    const a = await h.request('A.md', '# A\n**Tags**: #delegated-research\n');
    const [running] = await h.waitForAgents(1);
    await first.kill9();
    const b = await h.request('B.md', '# B\n**Tags**: #delegated-research\n');
    const second = h.start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(second);
    await waitFor(() => /adopted running agent/.test(second.output()), {
      timeoutMs: 30_000,
      message: () => `the adoption; ${second.output()}`,
    });
    // B is ready (quiet past the debounce) and read at start, yet held by A's slot.
    await waitFor(() => /held .*B\.md #delegated-research: Max 1/.test(second.output()), {
      timeoutMs: 30_000,
      message: () => `B held by the cap; ${second.output()}`,
    });
    expect(tagsOf(readFileSync(b, 'utf8'))).toContain('#delegated-research');
    expect(h.agents()).toHaveLength(1);
    await release(running!.session);
    await waitForTag(a, ['#done-research'], 60_000);
    const [, next] = await h.waitForAgents(2);
    expect(next?.file).toBe(b);
    await release(next!.session);
    await waitForTag(b, ['#done-research'], 60_000);
  });

  it('gives the slot back when the admission fails: a later item of the noun still runs', async () => {
    await writeFile(join(h.root, 'directives', 'TAGS.md'), TAGS);
    // A pause that has run out, so the next item would be the probe; but the pause file's lock
    // cannot be taken (a file where its lock directory goes), so the admission throws.
    const state = join(h.sessions, '.engine');
    await mkdir(state, { recursive: true });
    const past = new Date(Date.now() - 60_000).toISOString();
    await writeFile(
      join(state, 'pause.json'),
      JSON.stringify({ until: past, reason: 'test', since: past }),
    );
    const blocker = join(state, '.pause.json.engine-lock');
    await writeFile(blocker, 'not a lock');
    const d = h.start([], { TEST_AGENT_MODE: 'done' });
    await waitForReady(d);
    const first = await h.request('R1.md', '# Research 1\n**Tags**: #delegated-research\n');
    await waitFor(() => /ERROR/.test(d.output()) && d.output().includes('lock'), {
      timeoutMs: 30_000,
      message: () => `the failed admission; daemon:\n${d.output()}`,
    });
    await rm(blocker);
    // The item is read again when its file changes: with its noun's slot back, it runs.
    await writeFile(first, '# Research 1\n**Tags**: #delegated-research\n\nAgain.\n');
    await waitForTag(first, ['#done-research'], 60_000);
  });
});
