/**
 * `find` over a tree: walk markdown files, drop every file whose bytes cannot contain the tag
 * (a byte search, no parsing), and scan only the candidates with the bounded scan pool.
 */
import { readFile, stat } from 'node:fs/promises';
import PQueue from 'p-queue';
import { decodeText, MAX_PARSE_BYTES } from '../files/read-text-file.js';
import { ScanPool, ScanTimeoutError } from './scan-pool.js';
import type { TagOccurrence } from './scan-tags.js';
import type { TagPattern } from './tag-name.js';
import { walkMarkdownFiles } from './walk-markdown.js';

export interface FileMatch {
  /** The given path joined with the file's path below it. */
  path: string;
  occurrences: TagOccurrence[];
  text: string;
}

export interface SkippedFile {
  path: string;
  reason: string;
}

export interface FindOptions {
  paths: string[];
  pattern: TagPattern;
  /** Only the Tags line and front matter `tags:`. */
  tagsOnly?: boolean;
  pool?: ScanPool;
}

export interface FindResult {
  matches: FileMatch[];
  skipped: SkippedFile[];
}

const READ_CONCURRENCY = 32;

export async function findTaggedFiles(options: FindOptions): Promise<FindResult> {
  const pool = options.pool ?? new ScanPool();
  const needle = Buffer.from(options.pattern.prefilter, 'utf8');
  const matches = new Map<string, FileMatch>();
  const skipped: SkippedFile[] = [];
  const queue = new PQueue({ concurrency: READ_CONCURRENCY });
  const skip = (path: string, reason: string): void => {
    skipped.push({ path, reason });
  };

  const check = async (path: string): Promise<void> => {
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') skip(path, `cannot read: ${code ?? String(error)}`);
      return;
    }
    if (!bytes.includes(needle)) return;
    const file = decodeText(bytes);
    if (!file) return skip(path, 'not UTF-8 text');
    if (bytes.length > MAX_PARSE_BYTES) {
      return skip(path, `larger than ${MAX_PARSE_BYTES} bytes, not parsed`);
    }
    let occurrences: TagOccurrence[];
    try {
      ({ occurrences } = await pool.scan(file.text));
    } catch (error) {
      const reason =
        error instanceof ScanTimeoutError ? error.message : `parse failed: ${String(error)}`;
      return skip(path, reason);
    }
    const wanted = occurrences.filter(
      (o) => options.pattern.matches(o.tag) && (!options.tagsOnly || o.place !== 'prose'),
    );
    if (wanted.length > 0) matches.set(path, { path, occurrences: wanted, text: file.text });
  };

  try {
    for (const given of options.paths) {
      const info = await stat(given).catch(() => null);
      if (!info) continue;
      if (info.isFile()) {
        void queue.add(() => check(given));
        continue;
      }
      for await (const path of walkMarkdownFiles(given, (p) => skip(p.path, p.reason))) {
        if (matches.has(path)) continue;
        await queue.onSizeLessThan(READ_CONCURRENCY * 2);
        void queue.add(() => check(path));
      }
    }
    await queue.onIdle();
  } finally {
    if (!options.pool) await pool.close();
  }
  const sorted = [...matches.values()].sort((a, b) =>
    a.path < b.path ? -1 : a.path > b.path ? 1 : 0,
  );
  return { matches: sorted, skipped: skipped.sort((a, b) => (a.path < b.path ? -1 : 1)) };
}
