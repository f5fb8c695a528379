/**
 * The page's files: a fixed map from URL path to a file shipped with engine, read once at start.
 * No part of a request's URL ever reaches the filesystem.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export interface PageFile {
  type: string;
  body: Buffer;
}

// Beside this module: src/board/page/ from the sources, dist/board/page/ (copied there by the
// build) from the package, which ships no src/.
const PAGE_DIR = new URL('./page/', import.meta.url);

const FILES: Record<string, { name: string; type: string }> = {
  '/': { name: 'index.html', type: 'text/html; charset=utf-8' },
  '/board.js': { name: 'board.js', type: 'text/javascript; charset=utf-8' },
  '/board.css': { name: 'board.css', type: 'text/css; charset=utf-8' },
};

export async function loadPageFiles(): Promise<ReadonlyMap<string, PageFile>> {
  const entries = await Promise.all(
    Object.entries(FILES).map(async ([path, { name, type }]) => {
      const body = await readFile(fileURLToPath(new URL(name, PAGE_DIR)));
      return [path, { type, body }] as const;
    }),
  );
  return new Map(entries);
}
