/**
 * The record of what `engine init` wrote: `directives/.engine-init.json`, each file's path and the
 * sha256 of the bytes written. `engine init --upgrade` replaces a file only while its bytes still
 * hash to the record (the user has not edited it). It lives beside TAGS.md, so it is committed
 * and a clone can upgrade too. One writer: recordWritten.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EngineError, isErrnoException, messageOf } from '../errors.js';
import { writeJsonAtomic } from '../files/write-json-atomic.js';

export const MANIFEST = 'directives/.engine-init.json';

/** Path (relative, `/`-separated) -> `sha256:<hex>` of the bytes init wrote. */
export type Manifest = Record<string, string>;

export function hashOf(content: string | Buffer): string {
  return `sha256:${createHash('sha256').update(content).digest('hex')}`;
}

/** The manifest of `root`; empty when there is none (a project from before it existed). */
export async function readManifest(root: string): Promise<Manifest> {
  const path = join(root, MANIFEST);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (isErrnoException(error) && error.code === 'ENOENT') return {};
    throw new EngineError(`cannot read ${path}: ${messageOf(error)}`);
  }
  let files: unknown;
  try {
    files = (JSON.parse(text) as { files?: unknown } | null)?.files;
  } catch (error) {
    throw new EngineError(
      `${path}: not JSON (${messageOf(error)}); remove it to start the record anew`,
    );
  }
  if (typeof files !== 'object' || files === null)
    throw new EngineError(`${path}: no "files" object; remove the file to start the record anew`);
  return Object.fromEntries(
    Object.entries(files).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
}

/** Sets (a hash) or drops (null) each path's record, keeping the others. */
export async function recordWritten(
  root: string,
  changes: Record<string, string | null>,
): Promise<void> {
  if (Object.keys(changes).length === 0) return;
  const files = { ...(await readManifest(root)) };
  for (const [path, hash] of Object.entries(changes)) {
    if (hash === null) delete files[path];
    else files[path] = hash;
  }
  const sorted = Object.fromEntries(Object.entries(files).sort(([a], [b]) => a.localeCompare(b)));
  await writeJsonAtomic(join(root, MANIFEST), {
    $comment:
      'Written by engine init: the hash of each file it wrote, so that engine init --upgrade replaces only files not edited since. Commit it with them.',
    files: sorted,
  });
}
