/**
 * `--worktree` with a real daemon, real git and real agents (a sh script as `--agent-cmd`): each
 * item's agent works in its own worktree on `engine/<noun>/<slug>`, a requeued item's next attempt
 * works in the same one, done items name theirs in the request file, and `engine worktree prune`
 * removes a merged clean one and keeps one with uncommitted changes or an unmerged branch.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import {
  shellQuote,
  tagsOf,
  useDaemonHarness,
  waitForState,
  waitForTag,
  waitForText,
} from '../helpers/daemon-harness.js';
import { CLI, runCli } from '../helpers/run-cli.js';
import { worktreePlace } from '../../src/worktrees/worktree.js';
import { git } from '../helpers/git.js';

const h = useDaemonHarness();

async function gitRoot(): Promise<void> {
  git(h.root, 'init', '-q', '-b', 'main');
  await writeFile(join(h.root, 'shared.txt'), 'base\n');
  git(h.root, 'add', 'shared.txt', 'directives');
  git(h.root, 'commit', '-qm', 'base');
}

/**
 * The agent: edits shared.txt in its working directory and commits it, then marks done; with
 * `FAIL_FIRST` set, its first attempt only leaves an uncommitted file and exits 1.
 */
async function agentCmd(failFirst = false): Promise<string[]> {
  const script = join(h.root, 'agent.sh');
  await writeFile(
    script,
    [
      '#!/bin/sh',
      'set -e',
      'pwd > "$ENGINE_SESSION_DIR/cwd"',
      failFirst ? 'if [ "$ENGINE_ATTEMPT" = 1 ]; then echo partial > partial.txt; exit 1; fi' : ':',
      'ls > "$ENGINE_SESSION_DIR/seen"',
      'echo "work for $1" > shared.txt',
      'git add shared.txt',
      'git -c user.name=t -c user.email=t@t commit -qm "work for $1"',
      `${shellQuote(process.execPath)} ${shellQuote(CLI)} tag swap "$1" "#claimed-$2" "#done-$2"`,
      '',
    ].join('\n'),
  );
  await chmod(script, 0o755);
  return ['--worktree', '--agent-cmd', `${shellQuote(script)} {file} {noun}`];
}

const sessionOf = (text: string): string => /^\*\*Session\*\*: (\S+)$/m.exec(text)![1]!;
const worktreeOf = (text: string): { path: string; branch: string } => {
  const m = /^\*\*Worktree\*\*: `([^`]+)` \(branch `([^`]+)`\)$/m.exec(text)!;
  return { path: m[1]!, branch: m[2]! };
};

it('runs two agents editing the same file in their own worktrees; prune removes only a merged clean one', async () => {
  await gitRoot();
  const a = await h.request('fix-a.md', '# A\n**Tags**: #delegated-fix\n\nA.\n');
  const b = await h.request("b $(touch pwned) '-x'.md", '# B\n**Tags**: #delegated-fix\n\nB.\n');
  const d = h.start(await agentCmd());

  const doneA = await waitForTag(a, ['#done-fix', '#needs-fix'], 30_000);
  const doneB = await waitForTag(b, ['#done-fix', '#needs-fix'], 30_000);
  expect([tagsOf(doneA), tagsOf(doneB)], d.output().slice(-3000)).toEqual([
    ['#done-fix'],
    ['#done-fix'],
  ]);
  await waitForText(a, '**Worktree**:');
  await waitForText(b, '**Worktree**:');
  const wa = worktreeOf(await readFile(a, 'utf8'));
  const wb = worktreeOf(await readFile(b, 'utf8'));
  expect(wa.branch).toMatch(/^engine\/fix\/fix-a-[0-9a-f]{8}$/);
  expect(wb.branch).toMatch(/^engine\/fix\/b-touch-pwned-x-[0-9a-f]{8}$/);
  expect(existsSync(join(h.root, 'pwned'))).toBe(false);

  // Each ran in its own worktree and committed there; the main tree is untouched.
  for (const [file, w] of [
    [a, wa],
    [b, wb],
  ] as const) {
    const state = await waitForState(join(h.root, sessionOf(await readFile(file, 'utf8'))), (s) =>
      ['exited', 'abandoned'].includes(s.status),
    );
    expect(state.cwd).toBe(w.path);
    expect(state.worktree).toEqual(w);
    expect((await readFile(join(h.root, state.sessionRef as string, 'cwd'), 'utf8')).trim()).toBe(
      w.path,
    );
    expect(git(h.root, 'show', `${w.branch}:shared.txt`)).toBe(`work for ${file}\n`);
  }
  expect(await readFile(join(h.root, 'shared.txt'), 'utf8')).toBe('base\n');
  expect(git(h.root, 'status', '--porcelain', '--', '.engine-worktrees')).toBe('');

  // A merged, but with uncommitted work: kept. B unmerged: kept.
  git(h.root, 'merge', '-q', '--no-edit', wa.branch);
  await writeFile(join(wa.path, 'notes.txt'), 'not committed\n');
  let prune = await runCli(['worktree', 'prune', '--root', h.root]);
  expect(prune.code, prune.stderr).toBe(0);
  expect(prune.stdout).toContain(`kept ${wa.path} (${wa.branch}): it has uncommitted changes`);
  expect(prune.stdout).toContain(`kept ${wb.path} (${wb.branch}): ${wb.branch} is not merged`);
  expect(existsSync(join(wa.path, 'notes.txt'))).toBe(true);

  // Clean and merged: removed, branch and all. B stays.
  execFileSync('rm', [join(wa.path, 'notes.txt')]);
  prune = await runCli(['worktree', 'prune', '--root', h.root]);
  expect(prune.stdout).toContain(`removed ${wa.path} (${wa.branch}): finished and merged`);
  expect(existsSync(wa.path)).toBe(false);
  expect(git(h.root, 'branch', '--list', wa.branch)).toBe('');
  expect(existsSync(wb.path)).toBe(true);
  expect(git(h.root, 'branch', '--list', wb.branch)).toContain(wb.branch);
});

it('a requeued item works again in the same worktree, where its first attempt left its files', async () => {
  await gitRoot();
  const file = await h.request('fix-me.md', '# Fix\n**Tags**: #delegated-fix\n\nIt.\n');
  const d = h.start(await agentCmd(true));

  const requeued = await waitForTag(file, ['#needs-fix', '#done-fix'], 30_000);
  expect(tagsOf(requeued), d.output().slice(-3000)).toEqual(['#needs-fix']);
  const first = /\*\*Prior Session\*\*: (\S+)/.exec(requeued)![1]!;
  const firstState = await waitForState(join(h.root, first), (s) => s.status === 'abandoned');
  expect(await runCli(['tag', 'swap', file, '#needs-fix', '#delegated-fix'])).toMatchObject({
    code: 0,
  });

  const done = await waitForTag(file, ['#done-fix'], 30_000);
  const secondState = await waitForState(join(h.root, sessionOf(done)), (s) =>
    ['exited', 'abandoned'].includes(s.status),
  );
  expect(secondState.cwd).toBe(firstState.cwd);
  const seen = await readFile(join(h.root, sessionOf(done), 'seen'), 'utf8');
  expect(seen.split('\n')).toContain('partial.txt');
});

it('a worktree that cannot be made is a launch failure: retried, not an attempt, then #needs-X with the reason; starts no agent', async () => {
  await gitRoot();
  const file = await h.request('fix-me.md', '# Fix\n**Tags**: #delegated-fix\n\nIt.\n');
  const place = worktreePlace(h.root, 'fix', file);
  await mkdir(place.path, { recursive: true });
  await writeFile(join(place.path, 'mine.txt'), 'a human put this here\n');
  const d = h.start([...(await agentCmd()), '--retry-backoff-ms', '100']);

  const requeued = await waitForTag(file, ['#needs-fix', '#done-fix'], 60_000);
  expect(tagsOf(requeued), d.output().slice(-3000)).toEqual(['#needs-fix']);
  expect(requeued).toContain(`${place.path} is not the worktree of ${place.branch}`);
  expect(requeued).toContain('launch failures in a row');
  expect(requeued).not.toMatch(/\*\*Failure\*\*: agent/);
  expect(await readFile(join(place.path, 'mine.txt'), 'utf8')).toBe('a human put this here\n');
  const session = /\*\*Prior Session\*\*: (\S+)/.exec(requeued)![1]!;
  expect(existsSync(join(h.root, session, 'cwd'))).toBe(false);
});

it('refuses to start with --worktree, or "worktree": true, on a root outside git', async () => {
  const flag = await h.once(['--worktree']);
  expect(flag.code).toBe(1);
  expect(flag.output).toContain(
    `${h.root} is not in a git repository, which worktrees (--worktree) need`,
  );
  await writeFile(join(h.root, 'directives', 'engine.json'), '{"worktree": true}\n');
  const file = await h.once([]);
  expect(file.code).toBe(1);
  expect(file.output).toContain('is not in a git repository');
});
