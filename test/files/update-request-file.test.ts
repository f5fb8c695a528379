/**
 * The compare-and-swap writer, in process, with other writers injected at exact moments: during
 * the edit (between read and check), just before our replace, while the original is aside, and
 * just after the replace.
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
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EngineError } from '../../src/errors.js';
import { addTagToFile, swapTagInFile } from '../../src/files/tag-file.js';
import { asidePathFor } from '../../src/files/replace-if-unchanged.js';
import {
  lockPathFor,
  updateRequestFile,
  waitForWriter,
  type AfterWriter,
} from '../../src/files/update-request-file.js';
import { makeTempDir, type TempDir } from '../cli/fixtures.js';

type Hook = () => void;
const hooks = vi.hoisted(() => ({
  /** Just before the writer moves the original aside: after its last check. */
  beforeReplace: null as Hook | null,
  /** With the original aside, just before the new file is linked into its name. */
  beforeLink: null as Hook | null,
  /** Just after the new file took the original's name. */
  afterReplace: null as Hook | null,
  /** A filesystem without hard links: a link that would be made fails with EPERM. */
  noHardLinks: false,
  file: '',
}));

// The writer's replace (move aside, link), wrapped so a test can act at each step. Only the
// writer's own calls on the request file's name fire a hook: the test's writes never match.
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  const renameSync: typeof actual.renameSync = (from, to) => {
    if (from === hooks.file && String(to).endsWith('.engine-aside')) hooks.beforeReplace?.();
    actual.renameSync(from, to);
  };
  const linkSync: typeof actual.linkSync = (from, to) => {
    // As link(2) checks: the source, then the target, then whether the filesystem can link.
    if (hooks.noHardLinks && actual.existsSync(from) && !actual.existsSync(to))
      throw Object.assign(new Error('EPERM: link'), { code: 'EPERM' });
    const ours = to === hooks.file && String(from).endsWith('.tmp');
    if (ours) hooks.beforeLink?.();
    actual.linkSync(from, to);
    if (ours) hooks.afterReplace?.();
  };
  return { ...actual, default: { ...actual, renameSync, linkSync }, renameSync, linkSync };
});

let t: TempDir;
let file: string;

beforeEach(async () => {
  t = await makeTempDir('engine-update-');
  file = t.path('item.md');
  hooks.file = file;
});

afterEach(async () => {
  hooks.beforeReplace = null;
  hooks.beforeLink = null;
  hooks.afterReplace = null;
  const stray = readdirSync(t.dir).filter(
    (n) => n.endsWith('.tmp') || n.endsWith('.engine-lock') || n.endsWith('.engine-aside'),
  );
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
  it('re-applies the edit when an editor saved between our read and our check', async () => {
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

  it('keeps an editor save by rename that lands after the last check', async () => {
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n');
    let calls = 0;
    hooks.beforeReplace = () => {
      hooks.beforeReplace = null;
      editorSave('# T\n**Tags**: #delegated-x\n\nsaved just before our replace\n');
    };
    await updateRequestFile(file, (text) => (calls++, claim(text)));
    expect(calls).toBe(2);
    expect(await read()).toBe('# T\n**Tags**: #claimed-x\n\nsaved just before our replace\n');
  });

  it('keeps an editor save by rename that lands while the original is aside', async () => {
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n');
    let calls = 0;
    let missing = false;
    hooks.beforeLink = () => {
      hooks.beforeLink = null;
      missing = !existsSync(file);
      editorSave('# T\n**Tags**: #delegated-x\n\nsaved while the name was free\n');
    };
    await updateRequestFile(file, (text) => (calls++, claim(text)));
    expect(missing).toBe(true);
    expect(calls).toBe(2);
    expect(await read()).toBe('# T\n**Tags**: #claimed-x\n\nsaved while the name was free\n');
  });

  it('lets a reader that finds the file missing wait for the writer', async () => {
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n');
    let waited: Promise<AfterWriter> | null = null;
    hooks.beforeLink = () => {
      hooks.beforeLink = null;
      waited = waitForWriter(file);
    };
    await updateRequestFile(file, claim);
    expect(waited).not.toBeNull();
    expect(await waited).toEqual({ present: true, restored: false });
    expect(await read()).toBe('# T\n**Tags**: #claimed-x\n');
    const never = { present: false, restored: false };
    await expect(waitForWriter(t.path('never.md'))).resolves.toEqual(never);
  });

  it('puts back an original that a killed writer left aside', async () => {
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n\nhuman text\n');
    renameSync(file, asidePathFor(file));
    await expect(waitForWriter(file)).resolves.toEqual({ present: true, restored: true });
    expect(await read()).toBe('# T\n**Tags**: #delegated-x\n\nhuman text\n');
    renameSync(file, asidePathFor(file));
    await swapTagInFile(file, ['#delegated-x'], '#claimed-x');
    expect(await read()).toBe('# T\n**Tags**: #claimed-x\n\nhuman text\n');
    // Once the name has a newer file, what was left aside is dropped.
    writeFileSync(asidePathFor(file), 'older\n');
    await addTagToFile(file, '#b');
    expect(await read()).toBe('# T\n**Tags**: #claimed-x #b\n\nhuman text\n');
  });

  it('falls back to a plain rename where hard links do not work', async () => {
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n');
    hooks.noHardLinks = true;
    try {
      await updateRequestFile(file, claim);
    } finally {
      hooks.noHardLinks = false;
    }
    expect(await read()).toBe('# T\n**Tags**: #claimed-x\n');
  });

  it('carries over an append that lands between the final check and the replace', async () => {
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n\nlog 0\n');
    hooks.beforeReplace = () => {
      appendFileSync(file, 'log 1\nlog 2\n');
    };
    await updateRequestFile(file, claim);
    expect(await read()).toBe('# T\n**Tags**: #claimed-x\n\nlog 0\nlog 1\nlog 2\n');
  });

  it('carries over an append by a writer that opened the file before the replace', async () => {
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n');
    const fd = openSync(file, 'a');
    try {
      hooks.afterReplace = () => writeSync(fd, 'late line\n');
      await updateRequestFile(file, claim);
    } finally {
      closeSync(fd);
    }
    expect(await read()).toBe('# T\n**Tags**: #claimed-x\nlate line\n');
  });

  it('puts lines appended while the edit ran into the new file before it replaces the old', async () => {
    // An editor saving in place reads the file right after our replace and writes it back: the
    // new file must already hold every line, or that save drops them.
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n');
    let calls = 0;
    let atRename = '';
    hooks.afterReplace = () => (atRename = readFileSync(file, 'utf8'));
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
    // here it truncates just before our replace and writes back (with one new line) a little
    // after it, so the replaced inode is empty when the carry-over first looks at it.
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n\nhuman 0\n');
    const saved = '# T\n**Tags**: #delegated-x\n\nhuman 0\nhuman 1\n';
    let written: Promise<void> | null = null;
    hooks.beforeReplace = () => {
      if (written) return;
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
    hooks.beforeReplace = () => {
      appendFileSync(file, 'appended\n');
    };
    await addTagToFile(file, '#b');
    expect(await read()).toBe('# T\n**Tags**: #a #b\nappended\n');
  });

  it('continues an unedited last line without a line ending as the appender meant', async () => {
    writeFileSync(file, '# T\n**Tags**: #delegated-x\n\npartial');
    hooks.beforeReplace = () => {
      appendFileSync(file, ' line\n');
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
