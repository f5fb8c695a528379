/**
 * The one reader of request files: the daemon, the claim check, `engine status`, `await-tag`,
 * the compare-and-swap writer and the edit commands all read through it. It refuses what is not
 * a regular UTF-8 text file within the parse limit, tells a file that is gone apart from one
 * that cannot be read, and remembers a BOM so writes can put it back.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { EngineError, isErrnoException } from '../errors.js';
import { decodeText, MAX_PARSE_BYTES, type TextFile } from '../tags/source-text.js';

// Defined in tags/, since find's prefilter decodes with it too; re-exported for files/' readers.
export { decodeText, encodeText, MAX_PARSE_BYTES, type TextFile } from '../tags/source-text.js';

// Non-blocking, so a FIFO named like a request file cannot block the open or the read.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;
const CHUNK_BYTES = 64 * 1024;

/**
 * Where a read with needles of a file up to 64 KB lands before the search: most files of a pass
 * hold none and are dropped, so only a file that holds one is copied out. One per thread; reads
 * are synchronous. (find's BoundedReader keeps its own buffer and hands out views of it.)
 */
const scratch = Buffer.allocUnsafe(CHUNK_BYTES);

export interface TextRead {
  kind: 'text';
  file: TextFile;
  bytes: Buffer;
}

/** Why a file was not read as text. */
export type ReadProblem =
  /** Nothing at the path (ENOENT). */
  | { kind: 'gone' }
  /** A directory, FIFO, socket or device. */
  | { kind: 'not-file' }
  | { kind: 'too-large'; size: number }
  | { kind: 'not-text' }
  /** Any other system error (EACCES, ELOOP, EIO, ...). */
  | { kind: 'error'; error: NodeJS.ErrnoException };

/** The file holds none of the needles asked for: neither decoded nor worth a warning. */
export interface NoMatch {
  kind: 'no-match';
}

/** Told the file's fstat, made after the open and before the read. */
export type SeenStats = (info: Stats) => void;

/**
 * Reads a request file in four system calls (open, fstat, read, close). Synchronous, for passes
 * over whole trees: the promise API's thread-pool round trip per call costs several times the
 * calls. With `needles`, a file holding none of them is `no-match`, and a file over the limit is
 * searched in chunks, never read whole, to tell `no-match` from `too-large`. `seen` gets the
 * fstat: a pass that needs the file's stat before its read takes it from there (one system call
 * a file fewer than a stat of its own).
 */
export function readRequestFile(path: string): TextRead | ReadProblem;
export function readRequestFile(
  path: string,
  needles: readonly string[],
  seen?: SeenStats,
): TextRead | ReadProblem | NoMatch;
export function readRequestFile(
  path: string,
  needles?: readonly string[],
  seen?: SeenStats,
): TextRead | ReadProblem | NoMatch {
  let fd: number;
  try {
    fd = openRequestFile(path);
  } catch (error) {
    return problemOf(error);
  }
  try {
    return readOpenFile(fd, needles, seen);
  } catch (error) {
    return problemOf(error);
  } finally {
    closeSync(fd);
  }
}

/** Opens a request file for {@link readOpenFile}; throws the system error. */
export function openRequestFile(path: string): number {
  return openSync(path, OPEN_FLAGS);
}

/**
 * {@link readRequestFile} on a file already open, for a caller that keeps the descriptor (the
 * writer). A file that grows after the fstat is read up to its size then: the write that grew it
 * is seen like any other. Throws the system error of a failed read.
 */
export function readOpenFile(fd: number): TextRead | ReadProblem;
export function readOpenFile(
  fd: number,
  needles?: readonly string[],
  seen?: SeenStats,
): TextRead | ReadProblem | NoMatch;
export function readOpenFile(
  fd: number,
  needles?: readonly string[],
  seen?: SeenStats,
): TextRead | ReadProblem | NoMatch {
  const info = fstatSync(fd);
  seen?.(info);
  if (!info.isFile()) return { kind: 'not-file' };
  if (info.size > MAX_PARSE_BYTES) {
    return needles && !holdsAny(fd, needles)
      ? { kind: 'no-match' }
      : { kind: 'too-large', size: info.size };
  }
  const inScratch = needles !== undefined && info.size <= scratch.length;
  const bytes = inScratch ? scratch.subarray(0, info.size) : Buffer.allocUnsafe(info.size);
  let filled = 0;
  while (filled < bytes.length) {
    const read = readSync(fd, bytes, filled, bytes.length - filled, filled);
    if (read === 0) break;
    filled += read;
  }
  let content = bytes.subarray(0, filled);
  if (needles && !needles.some((needle) => content.includes(needle))) return { kind: 'no-match' };
  // Out of the scratch buffer, which the next read overwrites.
  if (inScratch) content = Buffer.from(content);
  const file = decodeText(content);
  return file ? { kind: 'text', file, bytes: content } : { kind: 'not-text' };
}

/** Searches a file in chunks, each overlapping the last by a needle's length less one byte. */
function holdsAny(fd: number, needles: readonly string[]): boolean {
  // The scratch buffer: this search ends before any other read uses it.
  const chunk = scratch;
  const overlap = Math.max(0, ...needles.map((needle) => Buffer.byteLength(needle) - 1));
  let kept = 0;
  for (let position = 0; ;) {
    const read = readSync(fd, chunk, kept, CHUNK_BYTES - kept, position);
    if (read === 0) return false;
    position += read;
    const end = kept + read;
    const view = chunk.subarray(0, end);
    if (needles.some((needle) => view.includes(needle))) return true;
    kept = Math.min(overlap, end);
    chunk.copy(chunk, 0, end - kept, end);
  }
}

function problemOf(error: unknown): ReadProblem {
  if (!isErrnoException(error)) throw error;
  if (error.code === 'ENOENT') return { kind: 'gone' };
  // A socket cannot be opened (ENXIO); a directory cannot be read (EISDIR).
  if (error.code === 'ENXIO' || error.code === 'EISDIR') return { kind: 'not-file' };
  return { kind: 'error', error };
}

/** The message for a file that could not be read as text, naming it. */
export function readError(path: string, problem: ReadProblem): EngineError {
  switch (problem.kind) {
    case 'gone':
      return new EngineError(`File not found: ${path}`);
    case 'not-file':
      return new EngineError(`Not a regular file: ${path}`);
    case 'too-large':
      return new EngineError(
        `File too large to parse safely: ${path} (${problem.size} bytes, limit ${MAX_PARSE_BYTES})`,
      );
    case 'not-text':
      return new EngineError(`Not a UTF-8 text file: ${path}`);
    case 'error':
      return fileError(path, problem.error);
  }
}

/** A request file as text, or an EngineError naming it. */
export async function readTextFile(path: string): Promise<TextRead> {
  const read = readRequestFile(path);
  if (read.kind !== 'text') throw readError(path, read);
  return read;
}

export function fileError(path: string, error: unknown): EngineError {
  if (isErrnoException(error)) {
    if (error.code === 'ENOENT')
      return new EngineError(`File not found: ${path}`, { cause: error });
    if (error.code === 'EISDIR')
      return new EngineError(`Not a regular file: ${path}`, { cause: error });
    if (error.code === 'EACCES' || error.code === 'EPERM') {
      return new EngineError(`Permission denied: ${path}`, { cause: error });
    }
    if (error.code === 'ELOOP')
      return new EngineError(`Symbolic link loop: ${path}`, { cause: error });
  }
  return new EngineError(
    `Cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`,
    {
      cause: error,
    },
  );
}
