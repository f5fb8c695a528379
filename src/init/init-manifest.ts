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

/**
 * Whether `key` names a file init writes: a normalized relative path under directives/, or a
 * command `.claude/commands/NAME.md`. The manifest is committed and so is input from anyone with
 * push access: a key such as `../victim` must never reach an unlink.
 */
export function isInitPath(key: string): boolean {
  const parts = key.split('/');
  if (parts.some((part) => part === '' || part === '.' || part === '..' || part.includes('\\')))
    return false;
  if (parts[0] === 'directives') return parts.length >= 2;
  return (
    parts.length === 3 &&
    parts[0] === '.claude' &&
    parts[1] === 'commands' &&
    /^[^.].*\.md$/.test(parts[2] ?? '')
  );
}

/** The manifest of `root` (empty when there is none), and the keys ignored as not init's paths. */
export async function readManifest(root: string): Promise<{ files: Manifest; ignored: string[] }> {
  const path = join(root, MANIFEST);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (isErrnoException(error) && error.code === 'ENOENT') return { files: {}, ignored: [] };
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
  const entries = Object.entries(files).filter(
    (entry): entry is [string, string] => typeof entry[1] === 'string',
  );
  return {
    files: Object.fromEntries(entries.filter(([key]) => isInitPath(key))),
    ignored: entries.map(([key]) => key).filter((key) => !isInitPath(key)),
  };
}

/** Sets (a hash) or drops (null) each path's record, keeping the others. */
export async function recordWritten(
  root: string,
  changes: Record<string, string | null>,
): Promise<void> {
  if (Object.keys(changes).length === 0) return;
  const { files } = await readManifest(root);
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
