/**
 * One unit of `find`'s prefilter: list a directory or read a batch of files and keep the files
 * whose bytes hold the needle (readUnit, on the main thread or in a worker), then locate their
 * tags with the fast path (scanRead: on the main thread, or in the worker when many of a unit's
 * files hold the needle, workerResult). Texts the fast path declines come back with
 * `occurrences: null`, for remark.
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

/** A file whose bytes hold the needle, decoded as text, its tags not yet located. */
export interface HeldFile {
  path: string;
  text: string;
}

/** What reading a unit gives. */
export interface UnitRead {
  /** More work found: subdirectories, and the files of a large directory in batches. */
  units: PrefilterUnit[];
  /** How many files the unit named (read, or skipped as unreadable or too large). */
  files: number;
  held: HeldFile[];
  skipped: Array<{ path: string; reason: string }>;
}

export interface UnitResult {
  units: PrefilterUnit[];
  candidates: Candidate[];
  skipped: Array<{ path: string; reason: string }>;
}

/** Files read per unit: small enough to balance threads, large enough to keep messages few. */
export const FILES_PER_UNIT = 256;

/** Reads a unit and locates the tags of the files it holds (readUnit, then scanRead). */
export function runUnit(unit: PrefilterUnit, reader: BoundedReader, texts = true): UnitResult {
  return scanRead(readUnit(unit, reader), texts);
}

/**
 * More than one file in this many holding the needle: a worker scans them itself (workerResult).
 */
const DENSE = 8;

/**
 * What a worker sends back for a unit it read. Its reads as they are when few of the files hold
 * the needle: the main thread scans those few, and the fast path's code is compiled there alone
 * (scanned in the worker, the 1,500 files held of 50,000 cost its run about 150 ms, most of it
 * that code's first, slow runs: docs/BENCHMARKS.md). Scanned here when many do, so a search most
 * files match (`#*`) is still scanned on every thread.
 */
export function workerResult(read: UnitRead, texts: boolean): UnitRead | UnitResult {
  return read.held.length * DENSE > read.files ? scanRead(read, texts) : read;
}

/** Lists or reads a unit, keeping the files that hold the needle. */
export function readUnit(unit: PrefilterUnit, reader: BoundedReader): UnitRead {
  const result: UnitRead = { units: [], files: 0, held: [], skipped: [] };
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
  for (const path of files) readFile(path, reader, result);
  result.files = files.length;
  return result;
}

/**
 * `texts`: whether a candidate the fast path read keeps its text; remark's candidates always do.
 * Without them the candidates are paths and numbers. (A worker's unscanned read carries the texts
 * of the few files it holds, up to one in eight: within find's figures, docs/BENCHMARKS.md.)
 */
export function scanRead(read: UnitRead, texts = true): UnitResult {
  return {
    units: read.units,
    candidates: read.held.map((held) => scanHeld(held, texts)),
    skipped: read.skipped,
  };
}

function scanHeld({ path, text }: HeldFile, texts: boolean): Candidate {
  const scan = scanTagsFast(text);
  return {
    path,
    text: texts || !scan ? text : '',
    occurrences: scan?.occurrences ?? null,
    problems: scan?.problems ?? [],
  };
}

function readFile(path: string, reader: BoundedReader, result: UnitRead): void {
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
  result.held.push({ path, text: file.text });
}
