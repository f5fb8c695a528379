/**
 * `engine init` through the built binary, on real directories: what it writes on an empty one,
 * that it never overwrites (byte for byte, same inode), that a second run changes nothing, that
 * --dry-run writes nothing, and its errors. What it writes is read back by the daemon's own
 * readers: the §TAG_DISPATCH parser and the settings loader.
 */
import { lstat, mkdir, readdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { readEngineJson, resolveSettings } from '../../src/settings/load-settings.js';
import { defaultSettings } from '../../src/settings/setting-table.js';
import { parseDispatchTable } from '../../src/dispatch/dispatch-table.js';
import { engine, makeTempDir, type TempDir } from '../cli/fixtures.js';

const SHIPPED_TAGS = new URL('../../directives/TAGS.md', import.meta.url);
/** The dispatchable skills of the shipped table, as command names. */
const SHIPPED_COMMANDS = ['brainstorm', 'research', 'fix', 'implement', 'chores', 'document'];
/** The .gitignore init writes in an empty directory (gitignore.test.ts checks each pattern). */
const GITIGNORE_ADDED =
  'added to .gitignore: sessions/.engine/ sessions/[0-9][0-9][0-9][0-9]_[0-9][0-9]_[0-9][0-9]_*/ *.engine-lock .engine-sync-[1-9]*-[1-9]*';

let t: TempDir;

beforeEach(async () => {
  t = await makeTempDir('engine-init-');
});

afterEach(async () => {
  await t.cleanup();
});

interface Entry {
  kind: 'file' | 'dir' | 'link';
  bytes?: string;
  ino: bigint;
  mtimeNs: bigint;
}

/** Every entry under `dir`: kind, bytes, inode and mtime, to see that nothing was written. */
async function tree(dir: string, prefix = ''): Promise<Map<string, Entry>> {
  const out = new Map<string, Entry>();
  for (const name of (await readdir(dir)).sort()) {
    const path = join(dir, name);
    const rel = prefix + name;
    const info = await lstat(path, { bigint: true });
    const base = { ino: info.ino, mtimeNs: info.mtimeNs };
    if (info.isSymbolicLink()) out.set(rel, { kind: 'link', bytes: await readlink(path), ...base });
    else if (info.isDirectory()) {
      out.set(rel, { kind: 'dir', ...base });
      for (const [k, v] of await tree(path, `${rel}/`)) out.set(k, v);
    } else out.set(rel, { kind: 'file', bytes: await readFile(path, 'latin1'), ...base });
  }
  return out;
}

const init = (...args: string[]) => engine(t.dir, ['init', ...args]);

describe('engine init on an empty directory', () => {
  it('writes TAGS.md, engine.json and ENGINE.md, makes sessions/, and a command per dispatchable skill', async () => {
    const result = await init('--root', t.dir);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(
      [
        'wrote directives/TAGS.md',
        'wrote directives/engine.json',
        'wrote directives/ENGINE.md',
        'made sessions/',
        ...SHIPPED_COMMANDS.map((c) => `wrote .claude/commands/${c}.md`),
        GITIGNORE_ADDED,
        `Initialized ${t.dir}.`,
        '',
      ].join('\n'),
    );
    expect([...(await tree(t.dir)).keys()]).toEqual([
      '.claude',
      '.claude/commands',
      ...SHIPPED_COMMANDS.map((c) => `.claude/commands/${c}.md`).sort(),
      '.gitignore',
      'directives',
      'directives/.engine-init.json',
      'directives/ENGINE.md',
      'directives/TAGS.md',
      'directives/engine.json',
      'sessions',
    ]);
  });

  it('writes a TAGS.md that the dispatch table parser reads, with a command for each skill', async () => {
    expect((await init('--root', t.dir)).code).toBe(0);
    const text = await readFile(t.path('directives', 'TAGS.md'), 'utf8');
    expect(text).toBe(await readFile(SHIPPED_TAGS, 'utf8'));
    const table = parseDispatchTable(text, 'TAGS.md');
    const skills = [...table.values()].filter((r) => r.dispatchable).map((r) => r.skill);
    expect(skills.map((s) => s.slice(1))).toEqual(SHIPPED_COMMANDS);
  });

  it('writes an engine.json that the daemon reads back as every setting at its default', async () => {
    expect((await init('--root', t.dir)).code).toBe(0);
    const file = await readEngineJson(t.dir);
    expect(file).toEqual(defaultSettings());
    const { settings, from } = resolveSettings({ flags: {}, env: {}, file });
    expect(settings).toEqual(defaultSettings());
    expect(new Set(Object.values(from))).toEqual(new Set(['engine.json']));
    const json = JSON.parse(await readFile(t.path('directives', 'engine.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(json.$comment).toMatch(/directives\/ENGINE\.md describes each one/);
    // ENGINE.md documents every key engine.json holds.
    const doc = await readFile(t.path('directives', 'ENGINE.md'), 'utf8');
    for (const key of Object.keys(json).filter((k) => k !== '$comment'))
      expect(doc).toContain(`| \`${key}\` | \`${JSON.stringify(json[key])}\` |`);
  });

  it('and `engine run` starts on it', async () => {
    expect((await init('--root', t.dir)).code).toBe(0);
    // The claude default is not on this PATH: the agent command is the only setting overridden.
    const result = await engine(t.dir, ['run', '--monitor-tags', '--dry-run', '--root', t.dir], {
      ENGINE_AGENT_CMD: 'true',
    });
    expect(result).toMatchObject({ code: 0, stdout: 'Nothing to dispatch.\n' });
    expect(result.stderr).not.toMatch(/WARN|ERROR/);
  });

  it('writes commands that state the protocol of an agent started by engine', async () => {
    expect((await init('--root', t.dir)).code).toBe(0);
    const fix = await readFile(t.path('.claude', 'commands', 'fix.md'), 'utf8');
    const front = /^---\n([^]*?)\n---\n/.exec(fix)?.[1];
    expect(parseYaml(front ?? '')).toEqual({
      description: 'Work on an engine request claimed for fix, then mark it done',
      'argument-hint': '<request-file>',
    });
    for (const part of [
      '$ENGINE_REQUEST_FILE',
      '$ARGUMENTS',
      '$ENGINE_SESSION_DIR/request-file',
      '$ENGINE_ATTEMPT',
      '$ENGINE_PRIOR_SESSION',
      '## Recovery',
      '## Response',
      `engine tag swap "$ENGINE_REQUEST_FILE" '#claimed-fix' '#done-fix'`,
    ])
      expect(fix).toContain(part);
    const implement = await readFile(t.path('.claude', 'commands', 'implement.md'), 'utf8');
    expect(implement).toContain(
      `engine tag swap "$ENGINE_REQUEST_FILE" '#claimed-implementation' '#done-implementation'`,
    );
  });

  it('makes the root when it does not exist', async () => {
    const root = t.path('new', 'project');
    const result = await init('--root', root);
    expect(result.code).toBe(0);
    expect(existsSync(join(root, 'directives', 'engine.json'))).toBe(true);
  });
});

describe('engine init on an existing project', () => {
  it('overwrites nothing, says what it kept, and makes commands for the table in force', async () => {
    await mkdir(t.path('directives'));
    await mkdir(t.path('.claude', 'commands'), { recursive: true });
    await mkdir(t.path('sessions'));
    await writeFile(
      t.path('directives', 'TAGS.md'),
      '# Mine\n\n## §TAG_DISPATCH\n\n- `#delegated-fix`: skill `/fix`, priority 1\n- `#delegated-triage`: skill `/triage`, priority 2\n- `#delegated-odd`: skill `/../escape`, priority 3\n- `#delegated-manual`: skill `/manual`, priority 4, daemon no\n- `#delegated-loop`: skill `/loop`, priority 5\n',
    );
    await writeFile(t.path('directives', 'engine.json'), '{ "maxAgents": 2 }\n');
    await writeFile(t.path('.claude', 'commands', 'fix.md'), 'my own /fix\n');
    await writeFile(t.path('sessions', 'REQ.md'), '# R\n\nTags: #needs-fix\n');
    await writeFile(t.path('.gitignore'), 'node_modules\n*.engine-lock');
    // A dangling symlink is something the user put there too: kept, its target not created.
    await symlink(t.path('nowhere.md'), t.path('directives', 'ENGINE.md'));
    const before = await tree(t.dir);

    const result = await init('--root', t.dir);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(
      "WARN: no command for skill '/../escape': not a plain command name such as /fix (letters, digits, - and _)\n" +
        "WARN: no command for skill '/loop': Claude Code has a built-in /loop, which would run instead: rename the skill in directives/TAGS.md\n",
    );
    expect(result.stdout).toBe(
      [
        'kept directives/TAGS.md (exists)',
        'kept directives/engine.json (exists)',
        'kept directives/ENGINE.md (exists)',
        'kept sessions/ (exists)',
        'kept .claude/commands/fix.md (exists)',
        'wrote .claude/commands/triage.md',
        'added to .gitignore: sessions/.engine/ sessions/[0-9][0-9][0-9][0-9]_[0-9][0-9]_[0-9][0-9]_*/ .engine-sync-[1-9]*-[1-9]*',
        `Initialized ${t.dir}.`,
        '',
      ].join('\n'),
    );
    // The user's lines stay; a line already there is not added again.
    expect(await readFile(t.path('.gitignore'), 'utf8')).toBe(
      'node_modules\n*.engine-lock\n\n# engine: runtime files (added by engine init)\nsessions/.engine/\nsessions/[0-9][0-9][0-9][0-9]_[0-9][0-9]_[0-9][0-9]_*/\n.engine-sync-[1-9]*-[1-9]*\n',
    );
    const after = await tree(t.dir);
    before.delete('.gitignore');
    for (const [path, entry] of before)
      expect({ path, ...after.get(path) }).toEqual({
        path,
        ...entry,
        // A directory's mtime changes when a file is added to it; its inode does not.
        ...(entry.kind === 'dir' ? { mtimeNs: after.get(path)?.mtimeNs } : {}),
      });
    expect([...after.keys()].filter((k) => !before.has(k))).toEqual([
      '.claude/commands/triage.md',
      '.gitignore',
      'directives/.engine-init.json',
    ]);
    // Only what init wrote is recorded: the user's files are not init's to upgrade.
    const manifest = JSON.parse(await readFile(t.path('directives/.engine-init.json'), 'utf8'));
    expect(Object.keys((manifest as { files: object }).files)).toEqual([
      '.claude/commands/triage.md',
    ]);
    expect(existsSync(t.path('nowhere.md'))).toBe(false);
    expect(existsSync(t.path('escape.md'))).toBe(false);
  });

  it('refuses a TAGS.md whose table does not parse, naming it, and writes nothing', async () => {
    await mkdir(t.path('directives'));
    await writeFile(t.path('directives', 'TAGS.md'), '# No table here\n');
    const result = await init('--root', t.dir);
    expect(result).toMatchObject({
      code: 1,
      stdout: '',
      stderr: `ERROR: ${t.path('directives', 'TAGS.md')}:1: no §TAG_DISPATCH section\n`,
    });
    expect([...(await tree(t.dir)).keys()]).toEqual(['directives', 'directives/TAGS.md']);
  });
});

describe('engine init twice in a row', () => {
  it('changes nothing the second time, and says everything was kept', async () => {
    expect((await init('--root', t.dir)).code).toBe(0);
    const before = await tree(t.dir);
    const second = await init('--root', t.dir);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(
      [
        'kept directives/TAGS.md (exists)',
        'kept directives/engine.json (exists)',
        'kept directives/ENGINE.md (exists)',
        'kept sessions/ (exists)',
        ...SHIPPED_COMMANDS.map((c) => `kept .claude/commands/${c}.md (exists)`),
        'kept .gitignore: has every engine line',
        `Everything exists in ${t.dir}: nothing written.`,
        '',
      ].join('\n'),
    );
    expect(await tree(t.dir)).toEqual(before);
  });
});

describe('engine init --dry-run', () => {
  it('lists what it would write and writes nothing', async () => {
    const root = t.path('project');
    const result = await init('--root', root, '--dry-run');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        'would write directives/TAGS.md',
        'would write directives/engine.json',
        'would write directives/ENGINE.md',
        'would make sessions/',
        ...SHIPPED_COMMANDS.map((c) => `would write .claude/commands/${c}.md`),
        GITIGNORE_ADDED.replace('added to', 'would add to'),
        `Dry run in ${root}: nothing written.`,
        '',
      ].join('\n'),
    );
    expect(await readdir(t.dir)).toEqual([]);
  });

  it('on a project, says what it would keep', async () => {
    await mkdir(t.path('sessions'));
    const before = await tree(t.dir);
    const result = await init('--root', t.dir, '--dry-run');
    expect(result.stdout).toContain('kept sessions/ (exists)\n');
    expect(result.stdout).toContain('would write directives/engine.json\n');
    expect(await tree(t.dir)).toEqual(before);
  });
});

describe('engine init on bad input', () => {
  it('refuses a root that is a file', async () => {
    await writeFile(t.path('file'), 'x');
    const result = await init('--root', t.path('file'));
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: `ERROR: --root ${t.path('file')} is not a directory\n`,
    });
    expect(await readFile(t.path('file'), 'utf8')).toBe('x');
  });

  it('refuses a root below a file', async () => {
    await writeFile(t.path('file'), 'x');
    const result = await init('--root', t.path('file', 'sub'));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^ERROR: cannot write .*file\/sub: ENOTDIR/);
  });

  // sysfs refuses new entries even to root, where a chmod would not.
  it.skipIf(!existsSync('/sys/kernel'))('says when the root is not writable', async () => {
    const result = await init('--root', '/sys');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^ERROR: cannot write \/sys\/directives: not writable \(E(ACCES|PERM)\)\n$/,
    );
  });
});

it('engine --help lists init', async () => {
  const result = await engine(t.dir, ['--help']);
  expect(result.stdout).toMatch(/engine init +Scaffold a project for dispatch/);
});
