/**
 * The compare-and-swap writer, in process, with other writers injected at exact moments: during
 * the edit (between read and check), just before our rename, and just after it.
 */
import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EngineError } from '../../src/errors.js';
import { addTagToFile, swapTagInFile } from '../../src/files/tag-file.js';
import { lockPathFor, updateRequestFile } from '../../src/files/update-request-file.js';
import { makeTempDir, type TempDir } from '../cli/fixtures.js';

type RenameHook = (from: string, to: string) => void;
const hooks = vi.hoisted(() => ({
  beforeRename: null as RenameHook | null,
  afterRename: null as RenameHook | null,
}));

// Our rename (synchronous, right after the last check), wrapped so a test can act just before
// and just after it. Only renames of our temporary files fire a hook; the test's own never do.
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  const renameSync: typeof actual.renameSync = (from, to) => {
    const ours = String(from).endsWith('.tmp');
    if (ours) hooks.beforeRename?.(String(from), String(to));
    actual.renameSync(from, to);
    if (ours) hooks.afterRename?.(String(from), String(to));
  };
  return { ...actual, default: { ...actual, renameSync }, renameSync };
});

let t: TempDir;
let file: string;

beforeEach(async () => {
  t = await makeTempDir('engine-update-');
  file = t.path('item.md');
  hooks.beforeRename = null;
  hooks.afterRename = null;
});

afterEach(async () => {
  hooks.beforeRename = null;
  hooks.afterRename = null;
  const stray = readdirSync(t.dir).filter((n) => n.endsWith('.tmp') || n.endsWith('.engine-lock'));
  expect(stray).toEqual([]);
  await t.cleanup();
});

const read = () => readFile(file, 'utf8');

/** Saves like an editor: whole file to a temporary file, renamed over the original. */
function editorSave(text: string): void {
  const temp = t.path('.item.md.swp');
  writeFileSync(temp, text);
  renameSync(temp, file);
}

const claim = (text: string): string => text.replace('#delegated-x', '#claimed-x');

describe('updateRequestFile', () => {
  it('re-applies the edit when an editor saved between our read and our rename', async () => {
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n');
    let calls = 0;
    await updateRequestFile(file, (text) => {
      if (calls++ === 0) editorSave('# T\n**Tags**: #delegated-x\n\nA line from the editor.\n');
      return claim(text);
    });
    expect(calls).toBe(2);
    expect(await read()).toBe('# T\n**Tags**: #claimed-x\n\nA line from the editor.\n');
  });

  it('re-applies the edit when the file was rewritten in place', async () => {
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n\nold body\n');
    let calls = 0;
    await updateRequestFile(file, (text) => {
      if (calls++ === 0) writeFileSync(file, '# T\n**Tags**: #delegated-x\n\nnew body\n');
      return claim(text);
    });
    expect(calls).toBe(2);
    expect(await read()).toBe('# T\n**Tags**: #claimed-x\n\nnew body\n');
  });

  it('keeps a line appended in place while the edit ran', async () => {
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n');
    let calls = 0;
    await updateRequestFile(file, (text) => {
      if (calls++ === 0) appendFileSync(file, 'log 1\n');
      return claim(text);
    });
    expect(await read()).toBe('# T\n**Tags**: #claimed-x\nlog 1\n');
  });

  it('carries over an append that lands between the final check and the rename', async () => {
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n\nlog 0\n');
    hooks.beforeRename = (_from, to) => {
      if (to === file) appendFileSync(file, 'log 1\nlog 2\n');
    };
    await updateRequestFile(file, claim);
    expect(await read()).toBe('# T\n**Tags**: #claimed-x\n\nlog 0\nlog 1\nlog 2\n');
  });

  it('carries over an append by a writer that opened the file before the rename', async () => {
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n');
    const fd = openSync(file, 'a');
    try {
      hooks.afterRename = (_from, to) => {
        if (to === file) writeSync(fd, 'late line\n');
      };
      await updateRequestFile(file, claim);
    } finally {
      closeSync(fd);
    }
    expect(await read()).toBe('# T\n**Tags**: #claimed-x\nlate line\n');
  });

  it('waits for an appender that opened the file before the rename and writes after the first look', async () => {
    // Another process opens the file for appending, then is descheduled until after our rename
    // and our first look at the old inode (found in CI: one line of 852 lost under load).
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n');
    const script = `const fs = require('node:fs');
      const fd = fs.openSync(process.argv[1], 'a');
      process.stdout.write('open\\n');
      process.stdin.once('data', () => { fs.writeSync(fd, 'late line\\n'); process.exit(0); });`;
    const child = spawn(process.execPath, ['-e', script, file], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    try {
      await new Promise((resolve) => child.stdout.once('data', resolve));
      let calls = 0;
      hooks.afterRename = (_from, to) => {
        if (to === file) child.stdin.write('go\n');
      };
      await updateRequestFile(file, (text) => {
        if (calls++ === 0) appendFileSync(file, 'log 1\n');
        return claim(text);
      });
    } finally {
      child.kill();
    }
    expect(await read()).toBe('# T\n**Tags**: #claimed-x\nlog 1\nlate line\n');
  });

  it('puts lines appended while the edit ran into the new file before it replaces the old', async () => {
    // An editor saving in place reads the file right after our rename and writes it back: the
    // new file must already hold every line, or that save drops them.
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n');
    let calls = 0;
    let atRename = '';
    hooks.afterRename = (_from, to) => {
      if (to === file) atRename = readFileSync(file, 'utf8');
    };
    await updateRequestFile(file, (text) => {
      if (calls++ === 0) appendFileSync(file, 'log 1\nlog 2\n');
      return claim(text);
    });
    expect(calls).toBe(1);
    expect(atRename).toBe('# T\n**Tags**: #claimed-x\nlog 1\nlog 2\n');
    expect(await read()).toBe(atRename);
  });

  it('carries over an in-place save caught between its truncation and its write', async () => {
    // An editor that saves in place opens the file with O_TRUNC, then writes the whole text:
    // here it truncates just before our rename and writes back (with one new line) a little
    // after it, so the replaced inode is empty when the carry-over first looks at it.
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n\nhuman 0\n');
    const saved = '# T\n**Tags**: #delegated-x\n\nhuman 0\nhuman 1\n';
    let written: Promise<void> | null = null;
    hooks.beforeRename = (_from, to) => {
      if (to !== file || written) return;
      const fd = openSync(file, 'w');
      written = new Promise((resolve) =>
        setTimeout(() => {
          writeSync(fd, saved);
          closeSync(fd);
          resolve();
        }, 50),
      );
    };
    await updateRequestFile(file, claim);
    await written;
    expect(await read()).toBe('# T\n**Tags**: #claimed-x\n\nhuman 0\nhuman 1\n');
  });

  it('starts a new line for an append after an edited last line without a line ending', async () => {
    writeFileSync(file, '# T\n**Tags**: #a');
    hooks.beforeRename = (_from, to) => {
      if (to === file) appendFileSync(file, 'appended\n');
    };
    await addTagToFile(file, '#b');
    expect(await read()).toBe('# T\n**Tags**: #a #b\nappended\n');
  });

  it('continues an unedited last line without a line ending as the appender meant', async () => {
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n\npartial');
    hooks.beforeRename = (_from, to) => {
      if (to === file) appendFileSync(file, ' line\n');
    };
    await updateRequestFile(file, claim);
    expect(await read()).toBe('# T\n**Tags**: #claimed-x\n\npartial line\n');
  });

  it('gives up on a file that keeps changing, without writing', async () => {
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n');
    let calls = 0;
    const result = updateRequestFile(
      file,
      (text) => {
        editorSave(`# T\n**Tags**: #delegated-x\n\nsave ${++calls}\n`);
        return claim(text);
      },
      { retryBudgetMs: 0 },
    );
    await expect(result).rejects.toThrow(
      new EngineError(`${file} kept changing while it was being updated; nothing was written`),
    );
    expect(calls).toBe(8);
    expect(await read()).toBe('# T\n**Tags**: #delegated-x\n\nsave 8\n');
  });

  it('writes nothing when the edit refuses, and releases the lock', async () => {
    writeFileSync(file, '# T\n**Tags**: #claimed-x\n');
    const before = statSync(file);
    await expect(swapTagInFile(file, ['#delegated-x'], '#claimed-x')).rejects.toThrow(
      `None of '#delegated-x' found on Tags line of ${file} (already claimed?)`,
    );
    expect(statSync(file).ino).toBe(before.ino);
    expect(statSync(file).mtimeMs).toBe(before.mtimeMs);
    expect(existsSync(lockPathFor(file))).toBe(false);
    const unchanged = await updateRequestFile(file, () => null);
    expect(unchanged).toEqual({ changed: false, path: file });
    expect(statSync(file).ino).toBe(before.ino);
  });

  it('takes over a stale lock left by a killed process', async () => {
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n');
    mkdirSync(lockPathFor(file));
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockPathFor(file), old, old);
    await updateRequestFile(file, claim);
    expect(await read()).toBe('# T\n**Tags**: #claimed-x\n');
    expect(existsSync(lockPathFor(file))).toBe(false);
  });

  it('fails at once, naming the file, when its lock cannot be taken for another reason', async () => {
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n');
    // A regular file where the lock directory goes, older than a stale lock: taking it over
    // fails (ENOTDIR). Only a lock held by another writer is worth waiting for.
    writeFileSync(lockPathFor(file), '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockPathFor(file), old, old);
    const started = Date.now();
    await expect(updateRequestFile(file, claim)).rejects.toThrow(
      new RegExp(`^Could not lock ${file}: ENOTDIR`),
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await read()).toBe('# T\n**Tags**: #delegated-x\n');
    unlinkSync(lockPathFor(file));
  });

  it('keeps its lock and temporary files hidden and within 255 bytes for names up to 255', async () => {
    const shared = 'p'.repeat(240);
    const names = [
      `${'a'.repeat(233)}.md`,
      `${'b'.repeat(247)}.md`,
      `${shared}${'c'.repeat(12)}.md`,
      `${shared}${'d'.repeat(12)}.md`,
      `${'é'.repeat(126)}.md`,
      `${'😀'.repeat(63)}.md`,
      `ab${'😀'.repeat(62)}.md`,
    ];
    const seen: Array<{ lock: string; temp: string }> = [];
    hooks.beforeRename = (from, to) => {
      // The lock is held while the temporary file is renamed over the file.
      expect(existsSync(lockPathFor(to))).toBe(true);
      seen.push({ lock: basename(lockPathFor(to)), temp: basename(from) });
    };
    for (const name of names) {
      const path = t.path(name);
      writeFileSync(path, '# T\n**Tags**: #delegated-x\n');
      await updateRequestFile(path, claim);
      expect(readFileSync(path, 'utf8')).toBe('# T\n**Tags**: #claimed-x\n');
    }
    expect(seen).toHaveLength(names.length);
    for (const { lock, temp } of seen) {
      for (const entry of [lock, temp]) {
        expect(Buffer.byteLength(entry)).toBeLessThanOrEqual(255);
        expect(entry.startsWith('.')).toBe(true);
        // Cut between characters: the name is valid UTF-8.
        expect(entry).not.toContain('\uFFFD');
      }
      expect(lock.endsWith('.engine-lock')).toBe(true);
      expect(temp).toMatch(/\.\d+\.[0-9a-f]{8}\.tmp$/);
    }
    // Two long names that share their start never share a lock.
    expect(new Set(seen.map((s) => s.lock)).size).toBe(names.length);
    // And a lock's name still shows which file it is for.
    expect(seen[2]?.lock.startsWith(`.${'p'.repeat(200)}`)).toBe(true);
    expect(seen[3]?.lock.startsWith(`.${'p'.repeat(200)}`)).toBe(true);
  });

  it('keeps the names of the lock and temporary files of a name that fits as they were', async () => {
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n');
    let temp = '';
    hooks.beforeRename = (from) => (temp = basename(from));
    await updateRequestFile(file, claim);
    expect(temp).toMatch(new RegExp(`^\\.item\\.md\\.${process.pid}\\.[0-9a-f]{8}\\.tmp$`));
    expect(lockPathFor(file)).toBe(t.path('.item.md.engine-lock'));
    // The longest name whose lock name fits as it is (255 bytes).
    const longest = `${'f'.repeat(239)}.md`;
    expect(lockPathFor(t.path(longest))).toBe(t.path(`.${longest}.engine-lock`));
  });

  it('serializes concurrent updates of one file', async () => {
    writeFileSync(file, '# T\n**Tags**: #P1\n');
    const tags = Array.from({ length: 12 }, (_, i) => `#t${i}`);
    await Promise.all(tags.map((tag) => addTagToFile(file, tag)));
    const line = (await read()).split('\n')[1] ?? '';
    expect(line.split(' ').slice(1).sort()).toEqual(['#P1', ...tags].sort());
  });

  it('edits the target of a symlink and reports the real path', async () => {
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n');
    const link = t.path('link.md');
    symlinkSync('item.md', link);
    const result = await updateRequestFile(link, claim);
    expect(result).toEqual({ changed: true, path: file });
    expect(await read()).toBe('# T\n**Tags**: #claimed-x\n');
    expect(statSync(link).isFile()).toBe(true);
    expect(existsSync(lockPathFor(file))).toBe(false);
  });
});
