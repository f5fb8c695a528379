/**
 * `find` over a tree: the prefilter (on every core) drops every file whose bytes cannot contain
 * the tag and decides most candidates with the line scanner; the rest go to remark in the
 * bounded scan pool.
 */
import { prefilterTree, type PrefilterOptions } from './prefilter-tree.js';
import { ScanPool, ScanTimeoutError } from './scan-pool.js';
import type { ScanProblem, TagOccurrence } from './scan-tags.js';
import type { TagPattern } from './tag-name.js';

export interface FileMatch {
  /** The given path joined with the file's path below it. */
  path: string;
  occurrences: TagOccurrence[];
  /** '' unless FindOptions.texts (or remark read it). */
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
  prefilter?: PrefilterOptions;
  /** Whether each match comes with its text; default yes (`find` wants them for --context). */
  texts?: boolean;
}

/** A candidate file whose tags could not all be read (malformed front matter). */
export interface FileProblem extends ScanProblem {
  path: string;
}

export interface FindResult {
  matches: FileMatch[];
  skipped: SkippedFile[];
  problems: FileProblem[];
}

/**
 * Texts waiting for remark; bounds memory when many candidates need the slow path. A set of
 * promises, not p-queue: loading p-queue (eventemitter3 is CommonJS, which node lexes to import
 * it) cost `find` about 10 ms of CPU before its first read.
 */
const MAX_PENDING_SCANS = 64;

export async function findTaggedFiles(options: FindOptions): Promise<FindResult> {
  const pool = options.pool ?? new ScanPool({ timeoutMs: options.scanTimeoutMs });
  const matches = new Map<string, FileMatch>();
  const skipped: SkippedFile[] = [];
  const problems: FileProblem[] = [];
  const slowScans = new Set<Promise<void>>();
  const record = (
    path: string,
    text: string,
    occurrences: TagOccurrence[],
    found: ScanProblem[],
  ): void => {
    for (const problem of found) problems.push({ path, ...problem });
    const wanted = occurrences.filter(
      (o) => options.pattern.matches(o.tag) && (!options.tagsOnly || o.place !== 'prose'),
    );
    if (wanted.length > 0) matches.set(path, { path, occurrences: wanted, text });
  };
  const scanSlowly = async (path: string, text: string): Promise<void> => {
    try {
      const scan = await pool.scan(text);
      record(path, text, scan.occurrences, scan.problems);
    } catch (error) {
      const reason =
        error instanceof ScanTimeoutError ? error.message : `parse failed: ${String(error)}`;
      skipped.push({ path, reason });
    }
  };

  try {
    const needle = Buffer.from(options.pattern.prefilter, 'utf8');
    const prefilter = { ...options.prefilter, texts: options.texts ?? options.prefilter?.texts };
    for await (const result of prefilterTree(options.paths, needle, prefilter)) {
      skipped.push(...result.skipped);
      for (const { path, text, occurrences, problems: found } of result.candidates) {
        if (occurrences) record(path, text, occurrences, found);
        else {
          const scanning: Promise<void> = scanSlowly(path, text).finally(() =>
            slowScans.delete(scanning),
          );
          slowScans.add(scanning);
        }
      }
      while (slowScans.size >= MAX_PENDING_SCANS) await Promise.race(slowScans);
    }
    await Promise.all(slowScans);
  } finally {
    if (!options.pool) await pool.close();
  }
  const sorted = [...matches.values()].sort((a, b) =>
    a.path < b.path ? -1 : a.path > b.path ? 1 : 0,
  );
  const byPath = <T extends { path: string }>(a: T, b: T): number => (a.path < b.path ? -1 : 1);
  return { matches: sorted, skipped: skipped.sort(byPath), problems: problems.sort(byPath) };
}
