/**
 * A daemon of git claims reads everything from its checkout of the shared branch, and starts
 * only once it holds its locks (docs/MULTI-HOST.md, "What status and the board read" and "One
 * daemon per checkout"): `Depends On` and directives/TAGS.md from the checkout, `engine status`
 * and its warm-up on the checkout's files, the root's lock before the checkout is touched,
 * `--dry-run` refused, and a second daemon of one repository refused. All real: a bare
 * repository as the remote, clones as hosts, the built CLI.
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DaemonHarness,
  TEST_TAGS_MD,
  waitForReady,
  type DaemonProcess,
} from '../helpers/daemon-harness.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';
import { sharedRemote, type SharedRemote } from './git-remote.js';

const GIT_FLAGS = ['--claims', 'git', '--claims-fetch-ms', '500', '--claims-lease-ms', '30000'];

let remote: SharedRemote | null = null;
const harnesses: DaemonHarness[] = [];

afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
  remote?.cleanup();
  remote = null;
});

/** The remote, seeded with the dispatch table and `files` (path → text). */
function seeded(files: Record<string, string>): SharedRemote {
  remote = sharedRemote({ 'directives/TAGS.md': TEST_TAGS_MD, ...files });
  return remote;
}

/** A harness on `root` (a clone, or a directory in one), not started. */
async function harness(root: string): Promise<DaemonHarness> {
  const h = await DaemonHarness.open(GIT_FLAGS, root);
  harnesses.push(h);
  return h;
}

/** Another clone commits `files` and pushes them to the shared branch. */
function pushFrom(shared: SharedRemote, name: string, files: Record<string, string>): void {
  const clone = shared.host(name);
  for (const [path, text] of Object.entries(files)) writeFileSync(join(clone, path), text);
  shared.git(clone, 'add', '.');
  shared.git(clone, 'commit', '--quiet', '-m', `from ${name}`);
  shared.git(clone, 'push', '--quiet', 'origin', 'main');
}

const stateOf = (shared: SharedRemote, name: string) => ({
  XDG_STATE_HOME: join(shared.dir, `state-${name}`),
});

/** The exit code of a daemon that must end by itself, within a deadline. */
async function exitOf(d: DaemonProcess): Promise<number | null> {
  await waitFor(() => d.child.exitCode !== null || d.child.signalCode !== null, {
    timeoutMs: 60_000,
    message: () => `the daemon's exit; output:\n${d.output()}`,
  });
  return d.exited;
}

describe('a daemon of git claims reads the shared branch, not the human tree', () => {
  it('reads directives/TAGS.md from its checkout: a row the human tree lacks routes the item', async () => {
    const shared = seeded({ 'sessions/item.md': '# Item\n**Tags**: #delegated-fix\n' });
    const clone = shared.host('a');
    // The human's unsaved table has no row for fix: read from here, the item would stay untouched.
    writeFileSync(join(clone, 'directives', 'TAGS.md'), TEST_TAGS_MD.replace(/^\|.*fix.*\|$/m, ''));
    const h = await harness(clone);
    const d = h.start([], stateOf(shared, 'a'));
    await waitForReady(d, 60_000);
    await waitFor(() => h.agents().length === 1, {
      timeoutMs: 60_000,
      message: () => `an agent on item.md; output:\n${d.output()}`,
    });
    expect(d.output()).not.toContain('has no row in §TAG_DISPATCH');
  });

  it('judges Depends On by the checkout: a dependency done on the shared branch frees the item', async () => {
    const shared = seeded({
      'sessions/first.md': '# First\n**Tags**: #needs-fix\n',
      'sessions/second.md': '# Second\n**Tags**: #needs-fix\n**Depends On**: sessions/first.md\n',
    });
    const clone = shared.host('a');
    // Another host finished the first and approved the second; the human tree has not pulled.
    pushFrom(shared, 'other', {
      'sessions/first.md': '# First\n**Tags**: #done-fix\n',
      'sessions/second.md':
        '# Second\n**Tags**: #delegated-fix\n**Depends On**: sessions/first.md\n',
    });
    const h = await harness(clone);
    const d = h.start([], stateOf(shared, 'a'));
    await waitForReady(d, 60_000);
    const [start] = await waitFor(() => h.agents().length === 1 && h.agents(), {
      timeoutMs: 60_000,
      message: () => `an agent on second.md; output:\n${d.output()}`,
    });
    expect(start!.file.endsWith(join('sessions', 'second.md'))).toBe(true);
    // No engine.json says git claims here: status follows the daemon started with the flag.
    const status = await runCli(['status', '--root', clone]);
    expect(status.stdout).toContain('Queue: the shared branch origin main');
    expect(status.stdout).toMatch(/^ {2}sessions\/second\.md {2}#/m);
  });

  it("has engine status show the checkout's items, say so, and warm its cache on the same paths", async () => {
    const shared = seeded({
      'directives/engine.json': '{ "claims": "git" }\n',
      'sessions/README.md': '# Requests\n',
    });
    const clone = shared.host('a');
    pushFrom(shared, 'other', { 'sessions/shared-only.md': '# Shared\n**Tags**: #needs-fix\n' });
    writeFileSync(join(clone, 'sessions', 'local-only.md'), '# Local\n**Tags**: #needs-fix\n');
    const h = await harness(clone);
    // The warm-up goes with the live index, which only parcel's watch gives (git claims watch
    // with chokidar unless told: docs/MULTI-HOST.md, "The watch").
    const d = h.start(['--watcher', 'parcel'], stateOf(shared, 'a'));
    await waitForReady(d, 60_000);
    await waitFor(() => /status (not )?warmed/.test(d.output()), {
      timeoutMs: 60_000,
      message: () => `the status warm-up; output:\n${d.output()}`,
    });
    expect(d.output()).toContain('status warmed');
    const status = await runCli(['status', '--root', clone]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('Queue: the shared branch origin main');
    expect(status.stdout).toMatch(/^ {2}sessions\/shared-only\.md {2}#needs-fix/m);
    expect(status.stdout).not.toContain('local-only.md');
    // Once the daemon is gone, the checkout it left is read as it is (its agents may still run
    // from it), and said to be; with that checkout gone too, the human tree.
    await d.stop();
    const after = await runCli(['status', '--root', clone]);
    expect(after.code).toBe(0);
    // The Queue line is wrapped to the width: read as one line.
    const queue = after.stdout.replace(/\s+/g, ' ');
    expect(queue).toContain('as the checkout of the daemon that last ran on this root');
    expect(after.stdout).toMatch(/^ {2}sessions\/shared-only\.md {2}#needs-fix/m);
    expect(after.stdout).not.toContain('local-only.md');
    const checkout = /last ran on this root left it \(([^)]+)\)/.exec(queue)?.[1];
    rmSync(checkout!, { recursive: true, force: true });
    const gone = await runCli(['status', '--root', clone]);
    expect(gone.stdout).toContain('Queue: this working tree, not the shared branch on origin');
    expect(gone.stdout).toContain('local-only.md');
  });
});

describe('a daemon of git claims starts only once it holds its locks', () => {
  it('is refused by the root lock before it touches the remote or the checkout', async () => {
    const shared = seeded({ 'sessions/README.md': '# Requests\n' });
    const clone = shared.host('a');
    const h = await harness(clone);
    const first = h.start([], stateOf(shared, 'a'));
    await waitForReady(first, 60_000);
    const second = h.start([], stateOf(shared, 'a'));
    expect(await exitOf(second)).not.toBe(0);
    expect(second.output()).toContain(`another daemon (pid ${first.child.pid}) is monitoring`);
    expect(second.output()).not.toContain('claims: git, on');
  });

  it('refuses --dry-run: no checkout made, no claim pushed', async () => {
    const shared = seeded({ 'sessions/item.md': '# Item\n**Tags**: #delegated-fix\n' });
    const h = await harness(shared.host('a'));
    const state = stateOf(shared, 'a');
    const d = h.start(['--dry-run'], state);
    expect(await exitOf(d)).toBe(1);
    expect(d.output()).toContain('--dry-run goes with local claims');
    expect(existsSync(join(state.XDG_STATE_HOME, 'engine', 'checkouts'))).toBe(false);
    expect(shared.git(shared.bare, 'for-each-ref', 'refs/engine/')).toBe('');
  });

  it('refuses a second daemon on another root of the same repository, naming the first', async () => {
    const shared = seeded({
      'sessions/README.md': '# Requests\n',
      'sub/directives/TAGS.md': TEST_TAGS_MD,
      'sub/sessions/README.md': '# Requests\n',
    });
    const clone = shared.host('a');
    const top = await harness(clone);
    const first = top.start([], stateOf(shared, 'a'));
    await waitForReady(first, 60_000);
    const sub = await harness(join(clone, 'sub'));
    const second = sub.start([], stateOf(shared, 'a'));
    expect(await exitOf(second)).not.toBe(0);
    expect(second.output()).toContain(`another daemon (pid ${first.child.pid}) holds the checkout`);
    expect(second.output()).toContain(`for the root ${clone}`);
    // One checkout, with its instance id and its lock, the first daemon's.
    const checkouts = join(stateOf(shared, 'a').XDG_STATE_HOME, 'engine', 'checkouts');
    const names = readdirSync(checkouts).sort();
    expect(names).toHaveLength(3);
    expect(names.slice(1)).toEqual([`${names[0]}.instance`, `${names[0]}.lock`]);
    const lock = readFileSync(join(checkouts, `${names[0]}.lock`), 'utf8');
    expect(JSON.parse(lock)).toMatchObject({ pid: first.child.pid, root: clone });
  });
});
