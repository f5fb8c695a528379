/**
 * `engine tag find` answered from the live tag index: the same matches, warnings and problems
 * as findTaggedFiles over the files, each path named as that walk names it (the given path
 * joined with the path below it). The files the index keeps as special are read here, by
 * findTaggedFiles itself.
 */
import { join, relative, sep } from 'node:path';
import { findTaggedFiles, type FileProblem, type SkippedFile } from '../tags/find-tagged-files.js';
import type { ScanPool } from '../tags/scan-pool.js';
import type { TagPlace } from '../tags/scan-tags.js';
import type { TagPattern } from '../tags/tag-name.js';
import type { IndexedOccurrence, TagIndex } from './tag-index.js';

/** A path as the user gave it, and where it leads (absolute, no symlink on the way). */
export interface GivenPath {
  given: string;
  absolute: string;
}

export interface IndexMatch {
  path: string;
  occurrences: IndexedOccurrence[];
}

export interface IndexFindResult {
  matches: IndexMatch[];
  skipped: SkippedFile[];
  problems: FileProblem[];
}

export interface IndexFindQuery {
  pattern: TagPattern;
  tagsOnly: boolean;
  paths: GivenPath[];
}

export async function findInIndex(
  index: TagIndex,
  query: IndexFindQuery,
  pool: ScanPool,
): Promise<IndexFindResult> {
  const matches = new Map<string, IndexMatch>();
  const skipped: SkippedFile[] = [];
  const problems: FileProblem[] = [];
  const wanted = (tag: string, place: TagPlace): boolean =>
    query.pattern.matches(tag) && (!query.tagsOnly || place !== 'prose');
  for (const { given, absolute } of query.paths) {
    // A path below `absolute` is it, a separator and its own part: no relative() needed.
    const below = absolute.endsWith(sep) ? absolute : absolute + sep;
    const shown = (file: string): string =>
      file === absolute
        ? given
        : join(given, file.startsWith(below) ? file.slice(below.length) : relative(absolute, file));
    for (const problem of index.unlistedUnder(absolute))
      skipped.push({ path: shown(problem.path), reason: problem.reason });
    for (const [file, found] of index.taggedUnder(absolute, wanted))
      matches.set(shown(file), { path: shown(file), occurrences: found });
    const specials = index.specialsUnder(absolute);
    if (specials.length === 0) continue;
    const read = await findTaggedFiles({
      paths: specials,
      pattern: query.pattern,
      tagsOnly: query.tagsOnly,
      pool,
      // Only the occurrences: the CLI reads the matched files itself for --context.
      texts: false,
    });
    for (const m of read.matches)
      matches.set(shown(m.path), { path: shown(m.path), occurrences: m.occurrences.map(brief) });
    skipped.push(...read.skipped.map((s) => ({ ...s, path: shown(s.path) })));
    problems.push(...read.problems.map((p) => ({ ...p, path: shown(p.path) })));
  }
  const sorted = [...matches.values()].sort((a, b) =>
    a.path < b.path ? -1 : a.path > b.path ? 1 : 0,
  );
  const byPath = <T extends { path: string }>(a: T, b: T): number => (a.path < b.path ? -1 : 1);
  return { matches: sorted, skipped: skipped.sort(byPath), problems: problems.sort(byPath) };
}

function brief({ tag, line, column, place }: IndexedOccurrence): IndexedOccurrence {
  return { tag, line, column, place };
}
