/**
 * `engine run --dry-run`, `engine status` and the daemon decide readiness and order by one rule
 * (src/dispatch/work-order.ts): the same files give the same list in all three, and the daemon
 * claims in that order. An item written a moment ago waits for its quiet period in all three,
 * rather than being missing from one of them.
 */
import { utimes, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { walkMarkdownFiles } from '../../src/tags/walk-markdown.js';
import { events, useDaemonHarness, waitForTag } from '../helpers/daemon-harness.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

const h = useDaemonHarness();

/** `name #delegated-noun` of each numbered line of a --dry-run. */
async function dryRun(extra: string[] = []): Promise<{ items: string[]; output: string }> {
  const d = h.start(['--dry-run', ...extra]);
  expect(await d.exited, d.output()).toBe(0);
  const items = d
    .output()
    .split('\n')
    .filter((line) => /^\d+\. /.test(line))
    .map((line) => {
      const [, file, tag] = line.split(/\s+/);
      return `${file!.split('/').pop()} ${tag}`;
    });
  return { items, output: d.output() };
}

/** The same of `engine status --json`'s waiting list. */
async function statusWaiting(): Promise<string[]> {
  const status = await runCli(['status', '--json', '--root', h.root]);
  expect(status.code, status.stderr).toBe(0);
  const { waiting } = JSON.parse(status.stdout) as {
    waiting: Array<{ file: string; noun: string }>;
  };
  return waiting.map((w) => `${w.file.split('/').pop()} #delegated-${w.noun}`);
}

describe('one order for --dry-run, engine status and the daemon', () => {
  it('lists an item written a moment ago in --dry-run, as status does, and the daemon claims it', async () => {
    const file = await h.request('NEW.md', '# New\n**Tags**: #delegated-fix\n');
    const { items, output } = await dryRun(['--debounce-ms', '3000']);
    expect(items).toEqual(['NEW.md #delegated-fix']);
    expect(output).toMatch(/written just now: ready in /);
    expect(await statusWaiting()).toEqual(items);
    h.start();
    await waitForTag(file, ['#done-fix'], 30_000);
  });

  it('gives the same list in --dry-run, status and the daemon’s claims', async () => {
    const later = new Date(Date.now() + 3600_000).toISOString();
    const files: Record<string, string> = {
      'A.md': '**Tags**: #delegated-fix',
      'B.md': '**Tags**: #delegated-fix',
      'C.md': '**Tags**: #delegated-chores #P0',
      'D.md': '**Tags**: #delegated-implementation',
      // A retry's backoff: not before an hour from now.
      'E.md': `**Tags**: #delegated-fix #P0\n\n## Recovery\n*   **Failure**: agent\n*   **Not Before**: ${later}`,
      // One claim per file: its other item waits for this claim to end.
      'F.md': '**Tags**: #claimed-implementation #delegated-fix #P0',
    };
    for (const [name, body] of Object.entries(files))
      await writeFile(h.file(name), `# ${name}\n${body}\n`);
    // Written in the reverse of the order they are walked in, a minute ago and earlier.
    const walked: string[] = [];
    for await (const path of walkMarkdownFiles(h.sessions)) walked.push(path);
    const base = Date.now() / 1000 - 60;
    for (const [i, path] of walked.entries()) await utimes(path, base - i, base - i);

    const { items } = await dryRun();
    const newestLast = walked
      .map((p) => p.split('/').pop())
      .filter((n) => n === 'A.md' || n === 'B.md')
      .reverse();
    expect(items).toEqual([
      'C.md #delegated-chores',
      ...newestLast.map((name) => `${name} #delegated-fix`),
      'D.md #delegated-implementation',
      'E.md #delegated-fix',
      'F.md #delegated-fix',
    ]);
    expect(await statusWaiting()).toEqual(items);

    const d = h.start(['--max-agents', '1']);
    const claimed = () =>
      events(h.root)
        .filter((e) => e.event === 'claimed')
        .map((e) => `${e.file!.split('/').pop()} #delegated-${e.noun}`);
    await waitFor(
      () => claimed().length === 4 && events(h.root).filter((e) => e.event === 'done').length === 4,
      {
        timeoutMs: 60_000,
        message: () => `four items done; ${d.output()}`,
      },
    );
    expect(claimed()).toEqual(items.slice(0, 4));
  });

  it('holds items after what they depend on, and ages the old ones, the same in --dry-run and status', async () => {
    const files: Record<string, string> = {
      // A failed parent: its child stays held (never released by the parent's failure).
      'PARENT.md':
        '**Tags**: #needs-fix\n\n## Recovery\n*   **Failure**: agent\n*   **Attempt**: 1',
      'CHILD.md': '**Tags**: #delegated-fix #P0\n**Depends On**: sessions/PARENT.md',
      // A cycle: each waits for the other.
      'X.md': '**Tags**: #delegated-fix\n**Depends On**: sessions/Y.md',
      'Y.md': '**Tags**: #delegated-fix\n**Depends On**: sessions/X.md',
      // Aged: a #P2 ready two hours ago orders with #P1 work (and before a fresher #P1).
      'OLD.md': '**Tags**: #delegated-fix',
      'NEW.md': '**Tags**: #delegated-fix #P1',
    };
    for (const [name, body] of Object.entries(files))
      await writeFile(h.file(name), `# ${name}\n${body}\n`);
    const at = (name: string, ago: number) =>
      utimes(h.file(name), (Date.now() - ago) / 1000, (Date.now() - ago) / 1000);
    for (const name of Object.keys(files)) await at(name, 60_000);
    await at('OLD.md', 2 * 3600_000);

    const { items, output } = await dryRun(['--aging', '30']);
    expect(output).toMatch(/OLD\.md .*aged one band up/);
    expect(output).toMatch(/CHILD\.md .*failed/);
    expect(output).toMatch(/X\.md .*cycle/);
    const status = await runCli(['status', '--json', '--root', h.root], {
      env: { ...process.env, ENGINE_AGING: '30' },
    });
    const { waiting } = JSON.parse(status.stdout) as {
      waiting: Array<{ file: string; noun: string; aged: boolean; wait: { kind: string } | null }>;
    };
    const named = (name: string) => waiting.find((w) => w.file.endsWith(`/${name}`));
    expect(waiting.map((w) => `${w.file.split('/').pop()} #delegated-${w.noun}`)).toEqual(items);
    expect(named('CHILD.md')?.wait?.kind).toBe('blocked');
    expect(named('X.md')?.wait?.kind).toBe('blocked');
    expect(named('OLD.md')?.aged).toBe(true);
    expect(items.indexOf('OLD.md #delegated-fix')).toBeLessThan(
      items.indexOf('NEW.md #delegated-fix'),
    );
    const text = await runCli(['status', '--root', h.root]);
    expect(text.stdout).toMatch(/after sessions\/PARENT\.md, which failed/);
  });
});
