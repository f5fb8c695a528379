/**
 * `find` over a tree: walk markdown files, drop every file whose bytes cannot contain the tag
 * (a byte search, no parsing), and scan only the candidates with the bounded scan pool.
 */
import { open, stat } from 'node:fs/promises';
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
  /** Time limit for parsing one file when no `pool` is given; the pool's default otherwise. */
  scanTimeoutMs?: number;
}

export interface FindResult {
  matches: FileMatch[];
  skipped: SkippedFile[];
}

const READ_CONCURRENCY = 32;

export async function findTaggedFiles(options: FindOptions): Promise<FindResult> {
  const pool = options.pool ?? new ScanPool({ timeoutMs: options.scanTimeoutMs });
  const needle = Buffer.from(options.pattern.prefilter, 'utf8');
  const matches = new Map<string, FileMatch>();
  const skipped: SkippedFile[] = [];
  const queue = new PQueue({ concurrency: READ_CONCURRENCY });
  const skip = (path: string, reason: string): void => {
    skipped.push({ path, reason });
  };

  const check = async (path: string): Promise<void> => {
    let bytes: Buffer | null | 'too-large';
    try {
      bytes = await readBounded(path, needle);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') skip(path, `cannot read: ${code ?? String(error)}`);
      return;
    }
    if (bytes === null) return;
    if (bytes === 'too-large') {
      return skip(path, `larger than ${MAX_PARSE_BYTES} bytes, not parsed`);
    }
    if (!bytes.includes(needle)) return;
    const file = decodeText(bytes);
    if (!file) return skip(path, 'not UTF-8 text');
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

const CHUNK_BYTES = 64 * 1024;

/**
 * The file's bytes; for a file over the parse limit, 'too-large' when it contains `needle`, else
 * null (no match, not worth a warning). A large file is searched in chunks, never read whole.
 */
async function readBounded(path: string, needle: Buffer): Promise<Buffer | null | 'too-large'> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    if (size <= MAX_PARSE_BYTES) return await handle.readFile();
    const overlap = Math.max(0, needle.length - 1);
    const buffer = Buffer.alloc(CHUNK_BYTES + overlap);
    let kept = 0;
    for (let position = 0; ;) {
      const { bytesRead } = await handle.read(buffer, kept, CHUNK_BYTES, position);
      if (bytesRead === 0) return null;
      const filled = kept + bytesRead;
      if (buffer.subarray(0, filled).includes(needle)) return 'too-large';
      kept = Math.min(overlap, filled);
      buffer.copy(buffer, 0, filled - kept, filled);
      position += bytesRead;
    }
  } finally {
    await handle.close();
  }
}
