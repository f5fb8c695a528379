/**
 * One unit of `find`'s prefilter, run on the main thread or in a worker: list a directory or
 * read a batch of files, keep the files whose bytes hold the needle, and locate their tags with
 * the fast path. Texts the fast path declines come back with `occurrences: null`, for remark.
 */
import { decodeText, MAX_PARSE_BYTES } from './source-text.js';
import type { BoundedReader } from './bounded-reader.js';
import type { ScanProblem, TagOccurrence } from './scan-tags.js';
import { scanTagsFast } from './scan-fast.js';
import { listMarkdownDirectorySync } from './walk-markdown.js';

/** What a prefilter worker starts with: the bytes to look for, and PrefilterOptions.texts. */
export interface PrefilterWorkerData {
  needle: Uint8Array;
  texts: boolean;
}

export type PrefilterUnit =
  { kind: 'directory'; path: string } | { kind: 'files'; paths: string[] };

export interface Candidate {
  path: string;
  /** '' when the fast path read it and the texts are not wanted (PrefilterOptions.texts). */
  text: string;
  occurrences: TagOccurrence[] | null;
  /** The fast path's problems; with `occurrences: null`, remark reports them instead. */
  problems: ScanProblem[];
}

export interface UnitResult {
  /** More work found: subdirectories, and the files of a large directory in batches. */
  units: PrefilterUnit[];
  candidates: Candidate[];
  skipped: Array<{ path: string; reason: string }>;
}

/** Files read per unit: small enough to balance threads, large enough to keep messages few. */
export const FILES_PER_UNIT = 256;

/**
 * `texts`: whether a candidate the fast path read keeps its text; remark's candidates always do.
 * Without them a worker's results are paths and numbers: at 50,000 files, cloning the texts
 * (2 KB each, 1,500 candidates) was a tenth of the worker's time.
 */
export function runUnit(unit: PrefilterUnit, reader: BoundedReader, texts = true): UnitResult {
  const result: UnitResult = { units: [], candidates: [], skipped: [] };
  let files: string[];
  if (unit.kind === 'directory') {
    const listing = listMarkdownDirectorySync(unit.path, (p) => result.skipped.push(p));
    for (const path of listing.directories) result.units.push({ kind: 'directory', path });
    files = listing.files.slice(0, FILES_PER_UNIT);
    for (let i = FILES_PER_UNIT; i < listing.files.length; i += FILES_PER_UNIT) {
      result.units.push({ kind: 'files', paths: listing.files.slice(i, i + FILES_PER_UNIT) });
    }
  } else {
    files = unit.paths;
  }
  for (const path of files) checkFile(path, reader, result, texts);
  return result;
}

function checkFile(path: string, reader: BoundedReader, result: UnitResult, texts: boolean): void {
  const skip = (reason: string): void => {
    result.skipped.push({ path, reason });
  };
  let read;
  try {
    read = reader.read(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A name that is not UTF-8 is listed with U+FFFD in place of its bytes: no file has that name.
    if (code === 'ENOENT' && path.includes('\uFFFD')) skip('its name is not UTF-8: not read');
    else if (code !== 'ENOENT') skip(`cannot read: ${code ?? String(error)}`);
    return;
  }
  if (read.kind === 'no-match') return;
  if (read.kind === 'too-large') return skip(`larger than ${MAX_PARSE_BYTES} bytes, not parsed`);
  if (!read.bytes.includes(reader.needle)) return;
  const file = decodeText(read.bytes);
  if (!file) return skip('not UTF-8 text');
  const scan = scanTagsFast(file.text);
  result.candidates.push({
    path,
    text: texts || !scan ? file.text : '',
    occurrences: scan?.occurrences ?? null,
    problems: scan?.problems ?? [],
  });
}
