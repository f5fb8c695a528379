/**
 * The session directory declared once: `sessionDir` names each of its files, and no other module
 * of src/ writes a file name of a session directory in its code.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SESSION_FILES, sessionDir, type SessionFile } from '../../src/sessions/session-dir.js';

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Code without its comments: a comment may name a file, as documentation does. */
const codeOf = (text: string): string =>
  text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

describe('the session directory', () => {
  it('has one path per file, each directly in the directory, each name once', () => {
    const dir = sessionDir('/p/sessions/s1');
    expect(dir.path).toBe('/p/sessions/s1');
    for (const name of Object.keys(SESSION_FILES) as SessionFile[]) {
      expect(dir[name]).toBe(join('/p/sessions/s1', SESSION_FILES[name]));
    }
    const names = Object.values(SESSION_FILES);
    expect(new Set(names).size).toBe(names.length);
  });

  it('is declared once: no other module of src/ spells a file name of it', async () => {
    const src = fileURLToPath(new URL('../../src/', import.meta.url));
    const found: string[] = [];
    for (const entry of await readdir(src, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const path = join(entry.parentPath, entry.name);
      const file = relative(src, path);
      if (file === join('sessions', 'session-dir.ts')) continue;
      const code = codeOf(await readFile(path, 'utf8'));
      for (const name of Object.values(SESSION_FILES)) {
        // As a string, a path's last part, or a word of a script or message.
        const spelled = new RegExp(`(?<=[\\s'"\`/])${escape(name)}(?![\\w.-])`);
        if (spelled.test(code)) found.push(`${file}: ${name}`);
      }
    }
    expect(found).toEqual([]);
  });
});
