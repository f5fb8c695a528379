/**
 * `find` over a tree: walk markdown files, drop every file whose bytes cannot contain the tag
 * (a byte search, no parsing), decide most candidates with the line scanner and send the rest to
 * remark in the bounded scan pool. Walking and reading are synchronous (see BoundedReader), with a
 * pause every few hundred files so the pool's replies and time limits are served.
 */
import { statSync, type Stats } from 'node:fs';
import PQueue from 'p-queue';
import { decodeText, MAX_PARSE_BYTES } from '../files/read-text-file.js';
import { BoundedReader, type BoundedRead } from './bounded-reader.js';
import { ScanPool, ScanTimeoutError } from './scan-pool.js';
import type { TagOccurrence } from './scan-tags.js';
import { scanTagsFast } from './scan-fast.js';
import type { TagPattern } from './tag-name.js';
import { walkMarkdownFilesSync } from './walk-markdown.js';

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
  /** Time limit for parsing one file when no `pool` is given; the pool's default otherwise. */
  scanTimeoutMs?: number;
}

export interface FindResult {
  matches: FileMatch[];
  skipped: SkippedFile[];
}

/** Texts waiting for remark; bounds memory when many candidates need the slow path. */
const MAX_PENDING_SCANS = 64;
const FILES_BETWEEN_PAUSES = 256;

export async function findTaggedFiles(options: FindOptions): Promise<FindResult> {
  const pool = options.pool ?? new ScanPool({ timeoutMs: options.scanTimeoutMs });
  const reader = new BoundedReader(Buffer.from(options.pattern.prefilter, 'utf8'));
  const matches = new Map<string, FileMatch>();
  const skipped: SkippedFile[] = [];
  const slowScans = new PQueue();
  const skip = (path: string, reason: string): void => {
    skipped.push({ path, reason });
  };
  const record = (path: string, text: string, occurrences: TagOccurrence[]): void => {
    const wanted = occurrences.filter(
      (o) => options.pattern.matches(o.tag) && (!options.tagsOnly || o.place !== 'prose'),
    );
    if (wanted.length > 0) matches.set(path, { path, occurrences: wanted, text });
  };
  const scanSlowly = async (path: string, text: string): Promise<void> => {
    try {
      record(path, text, (await pool.scan(text)).occurrences);
    } catch (error) {
      const reason =
        error instanceof ScanTimeoutError ? error.message : `parse failed: ${String(error)}`;
      skip(path, reason);
    }
  };

  const check = async (path: string): Promise<void> => {
    let read: BoundedRead;
    try {
      read = reader.read(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') skip(path, `cannot read: ${code ?? String(error)}`);
      return;
    }
    if (read.kind === 'no-match') return;
    if (read.kind === 'too-large') {
      return skip(path, `larger than ${MAX_PARSE_BYTES} bytes, not parsed`);
    }
    if (!read.bytes.includes(reader.needle)) return;
    const file = decodeText(read.bytes);
    if (!file) return skip(path, 'not UTF-8 text');
    const fast = scanTagsFast(file.text);
    if (fast) return record(path, file.text, fast.occurrences);
    await slowScans.onSizeLessThan(MAX_PENDING_SCANS);
    void slowScans.add(() => scanSlowly(path, file.text));
  };

  try {
    let sincePause = 0;
    for (const given of options.paths) {
      const info = statOrNull(given);
      if (!info) continue;
      const paths = info.isFile()
        ? [given]
        : walkMarkdownFilesSync(given, (p) => skip(p.path, p.reason));
      for (const path of paths) {
        if (matches.has(path)) continue;
        await check(path);
        if (++sincePause === FILES_BETWEEN_PAUSES) {
          sincePause = 0;
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    }
    await slowScans.onIdle();
  } finally {
    if (!options.pool) await pool.close();
  }
  const sorted = [...matches.values()].sort((a, b) =>
    a.path < b.path ? -1 : a.path > b.path ? 1 : 0,
  );
  return { matches: sorted, skipped: skipped.sort((a, b) => (a.path < b.path ? -1 : 1)) };
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}
