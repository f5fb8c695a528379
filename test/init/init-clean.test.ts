/**
 * `engine init` leaves a project clean and standing on its own: .gitignore lines that hide every
 * runtime file engine writes (checked with git itself), a TAGS.md that explains its columns and
 * points nowhere the project lacks, no command Claude Code has a built-in for, the commit step
 * with worktrees, and `--upgrade`, which replaces only what init wrote and the user did not edit.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { engineBinDir } from '../../src/agents/engine-shim.js';
import { daemonLockPath } from '../../src/daemon/daemon-lock.js';
import { parseDispatchTable } from '../../src/dispatch/dispatch-table.js';
import { CLAUDE_CODE_COMMANDS } from '../../src/init/claude-builtins.js';
import { GITIGNORE_LINES } from '../../src/init/gitignore.js';
import { hashOf, MANIFEST } from '../../src/init/init-manifest.js';
import { skillCommand } from '../../src/init/plan-init.js';
import { eventLogPath } from '../../src/sessions/event-log.js';
import { newSessionRef, sessionDir } from '../../src/sessions/session-dir.js';
import { scanTags } from '../../src/tags/scan-tags.js';
import { engine, makeTempDir, type TempDir } from '../cli/fixtures.js';
import { git as gitIn } from '../helpers/git.js';

let t: TempDir;

beforeEach(async () => {
  t = await makeTempDir('engine-init-clean-');
});

afterEach(async () => {
  await t.cleanup();
});

const init = (...args: string[]) => engine(t.dir, ['init', '--root', t.dir, ...args]);
const git = (...args: string[]) => gitIn(t.dir, ...args);

async function put(path: string, text = 'x\n'): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

describe('engine init: .gitignore', () => {
  it('hides every runtime file engine writes, and no request file', async () => {
    git('init', '-q');
    expect((await init()).code).toBe(0);
    git('add', '-A');
    git('commit', '-q', '-m', 'init');
    // What a daemon run leaves under the root, at the paths engine's own modules name.
    const session = sessionDir(join(t.dir, newSessionRef('fix', 'sessions/a.md', new Date())));
    await put(session.state, '{}');
    await put(session.agentLog);
    await put(eventLogPath(t.dir));
    await put(daemonLockPath(t.dir));
    await put(join(engineBinDir(t.dir), 'engine'), '#!/bin/sh\nexec /abs/node /abs/main.js "$@"\n');
    await put(join(t.dir, 'sessions', '.engine', 'control', 'control.sock'));
    await put(join(t.dir, 'sessions', 'a.md.engine-lock', 'owner'));
    await put(join(t.dir, '.engine-sync-123-1'));
    expect(git('status', '--porcelain', '--untracked-files=all')).toBe('');
    // Requests are the project's own: engine new's file shows up for a commit; so does a user's
    // file that only starts like a sync file.
    const made = await engine(t.dir, ['new', 'fix', 'A bug']);
    await put(join(t.dir, '.engine-sync-notes.md'));
    expect(git('status', '--porcelain', '--untracked-files=all')).toBe(
      `?? .engine-sync-notes.md\n?? ${made.stdout.trim().slice(t.dir.length + 1)}\n`,
    );
  });
});

describe("README's list of what engine init leaves", () => {
  it('names the record of what init wrote and every .gitignore line', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const start = readme.indexOf('**What `engine init` leaves in a project**');
    const part = readme.slice(start, readme.indexOf('\n\n', start)).replace(/\s+/g, ' ');
    expect(part).toContain(`\`${MANIFEST}\``);
    for (const line of GITIGNORE_LINES) expect(part).toContain(`\`${line}\``);
  });
});

describe('engine init: the TAGS.md it writes', () => {
  it('explains each column (Mode included), points to no file the project lacks, and carries no tag', async () => {
    expect((await init()).code).toBe(0);
    const text = await readFile(t.path('directives', 'TAGS.md'), 'utf8');
    const header = text.split('\n').find((line) => line.startsWith('| Tag |')) ?? '';
    const columns = header
      .split('|')
      .map((c) => c.trim())
      .filter(Boolean);
    expect(columns).toEqual(['Tag', 'Skill', 'Mode', 'Priority', 'Daemon', 'Max']);
    for (const column of columns) expect(text).toContain(`- **${column}**: `);
    expect(text).not.toMatch(/docs\/|DAEMON\.md/);
    // The table's examples are code: the file is no work item for the daemon.
    expect(scanTags(text).occurrences).toEqual([]);
  });

  it('has no demo row and no command for it', async () => {
    expect((await init()).code).toBe(0);
    const table = parseDispatchTable(await readFile(t.path('directives', 'TAGS.md'), 'utf8'));
    expect(table.has('demo')).toBe(false);
    expect(existsSync(t.path('.claude', 'commands', 'demo.md'))).toBe(false);
  });
});

describe("engine init: Claude Code's built-in commands", () => {
  it('writes no command whose name Claude Code has (loop among them)', async () => {
    expect(CLAUDE_CODE_COMMANDS.has('loop')).toBe(true);
    const result = await init();
    expect(result.code).toBe(0);
    const written = [...result.stdout.matchAll(/^wrote \.claude\/commands\/(.+)\.md$/gm)].map(
      (m) => m[1] as string,
    );
    expect(written.length).toBeGreaterThan(0);
    expect(written.filter((name) => CLAUDE_CODE_COMMANDS.has(name))).toEqual([]);
  });
});

describe('engine init --worktree', () => {
  it('turns worktrees on in engine.json, and each command says to commit on the branch before done', async () => {
    expect((await init('--worktree')).code).toBe(0);
    const json = JSON.parse(await readFile(t.path('directives', 'engine.json'), 'utf8'));
    expect((json as { worktree: boolean }).worktree).toBe(true);
    const fix = await readFile(t.path('.claude', 'commands', 'fix.md'), 'utf8');
    const commit = fix.indexOf('5. **Commit your work** on your branch');
    const done = fix.indexOf('6. **Mark it done**');
    expect(commit).toBeGreaterThan(0);
    expect(done).toBeGreaterThan(commit);
    expect(fix).toContain('`git commit`');
  });

  it('without worktrees, no commit step', () => {
    expect(skillCommand('/fix', ['fix'], false)).not.toContain('Commit your work');
    expect(skillCommand('/fix', ['fix'], false)).toContain('5. **Mark it done**');
  });
});

describe('engine init --upgrade', () => {
  /** Makes a file look as an older init wrote it: its bytes and its record both `old`. */
  async function olderVersion(path: string, old: string): Promise<void> {
    await put(t.path(path), old);
    const manifest = JSON.parse(await readFile(t.path(MANIFEST), 'utf8')) as {
      files: Record<string, string>;
    };
    manifest.files[path] = hashOf(old);
    await writeFile(t.path(MANIFEST), JSON.stringify(manifest));
  }

  /** Makes a file look as if init never recorded it (a project from before the record). */
  async function unrecorded(path: string, text: string): Promise<void> {
    await olderVersion(path, text);
    const manifest = JSON.parse(await readFile(t.path(MANIFEST), 'utf8')) as {
      files: Record<string, string>;
    };
    delete manifest.files[path];
    await writeFile(t.path(MANIFEST), JSON.stringify(manifest));
  }

  it('replaces unedited files with a diff, leaves edited ones named, removes dropped ones, writes missing ones', async () => {
    expect((await init()).code).toBe(0);
    const fixNow = await readFile(t.path('.claude/commands/fix.md'), 'utf8');
    await olderVersion('.claude/commands/fix.md', fixNow.replace('Do the work', 'Do the old work'));
    await olderVersion('.claude/commands/loop.md', 'an old /loop command\n');
    const chores = t.path('.claude/commands/chores.md');
    const edited = `${await readFile(chores, 'utf8')}My own step.\n`;
    await olderVersion('.claude/commands/chores.md', 'what init wrote once\n');
    await writeFile(chores, edited);
    await unrecorded('.claude/commands/document.md', 'not recorded, mine\n');
    await olderVersion('.claude/commands/research.md', 'x');
    execFileSync('rm', [t.path('.claude/commands/research.md')]);

    const dry = await init('--upgrade', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('would upgrade .claude/commands/fix.md\n');
    expect(dry.stdout).toContain('-3. **Do the old work**');
    expect(await readFile(t.path('.claude/commands/loop.md'), 'utf8')).toBe(
      'an old /loop command\n',
    );

    const result = await init('--upgrade');
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toContain(
      'upgraded .claude/commands/fix.md\n--- a/.claude/commands/fix.md\n+++ b/.claude/commands/fix.md\n',
    );
    expect(out).toContain('-3. **Do the old work**');
    expect(out).toContain('+3. **Do the work**');
    expect(await readFile(t.path('.claude/commands/fix.md'), 'utf8')).toBe(fixNow);
    expect(out).toContain('removed .claude/commands/loop.md: no longer written by engine init\n');
    expect(existsSync(t.path('.claude/commands/loop.md'))).toBe(false);
    expect(out).toContain(
      'left alone .claude/commands/chores.md: edited since engine init wrote it\n',
    );
    expect(await readFile(chores, 'utf8')).toBe(edited);
    expect(out).toContain('-My own step.');
    expect(out).toContain(
      'left alone .claude/commands/document.md: not recorded as written by engine init\n',
    );
    expect(out).toContain('wrote .claude/commands/research.md\n');
    expect(out).toContain('up to date directives/TAGS.md\n');
    expect(out).toMatch(/To take it: move your file aside, run engine init --upgrade/);

    // The record now matches what is there: a second upgrade changes nothing.
    const again = await init('--upgrade');
    expect(again.stdout).not.toMatch(/^(upgraded|removed|wrote) /m);
    expect(again.stdout).toContain('up to date .claude/commands/fix.md\n');
  });

  it('ignores and names a recorded key outside what init writes, deleting nothing outside the root', async () => {
    expect((await init()).code).toBe(0);
    const victim = join(dirname(t.dir), `${basename(t.dir)}-victim`);
    await writeFile(victim, 'precious\n');
    try {
      const manifest = JSON.parse(await readFile(t.path(MANIFEST), 'utf8')) as {
        files: Record<string, string>;
      };
      manifest.files[`../${basename(victim)}`] = hashOf('precious\n');
      manifest.files[victim] = hashOf('precious\n');
      manifest.files['directives/../../x'] = hashOf('precious\n');
      await writeFile(t.path(MANIFEST), JSON.stringify(manifest));
      const result = await init('--upgrade');
      expect(result.code).toBe(0);
      expect(await readFile(victim, 'utf8')).toBe('precious\n');
      expect(result.stdout).toContain(
        `left alone ../${basename(victim)}: in ${MANIFEST}, but not a path engine init writes: ignored\n`,
      );
      expect(result.stdout).toContain(`left alone ${victim}: in ${MANIFEST}`);
      expect(result.stdout).toContain('left alone directives/../../x: in');
    } finally {
      await rm(victim, { force: true });
    }
  });

  it('replaces no symlink and writes through no symlinked parent', async () => {
    expect((await init()).code).toBe(0);
    const outside = await makeTempDir('engine-init-outside-');
    try {
      // A recorded command that is a symlink to a file outside, with the bytes of the record.
      await writeFile(outside.path('target.md'), 'old command\n');
      await olderVersion('.claude/commands/fix.md', 'old command\n');
      await rm(t.path('.claude/commands/fix.md'));
      await symlink(outside.path('target.md'), t.path('.claude/commands/fix.md'));
      // A symlinked directives/sub holding a recorded file init no longer writes.
      await writeFile(outside.path('gone.md'), 'dropped\n');
      await symlink(outside.dir, t.path('directives/sub'));
      await olderVersion('directives/sub/gone.md', 'dropped\n');
      const result = await init('--upgrade');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(
        'left alone .claude/commands/fix.md: a symlink: left alone\n',
      );
      expect(result.stdout).toContain(
        'left alone directives/sub/gone.md: directives/sub is a symlink: left alone\n',
      );
      expect(await readFile(outside.path('target.md'), 'utf8')).toBe('old command\n');
      expect(await readFile(outside.path('gone.md'), 'utf8')).toBe('dropped\n');
      expect(await readlink(t.path('.claude/commands/fix.md'))).toBe(outside.path('target.md'));
    } finally {
      await outside.cleanup();
    }
  });

  it('refuses a directory that was never initialized', async () => {
    const result = await init('--upgrade');
    expect(result).toMatchObject({
      code: 1,
      stderr: `ERROR: nothing to upgrade in ${t.dir}: no directives/; run engine init first\n`,
    });
  });
});
