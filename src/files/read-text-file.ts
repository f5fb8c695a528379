/**
 * Safe reads of markdown files: refuse what is not a regular UTF-8 text file, with a message
 * that names the file, and remember a BOM so writes can put it back.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { EngineError, isErrnoException } from '../errors.js';
import { decodeText, MAX_PARSE_BYTES, type TextFile } from '../tags/source-text.js';

// Defined in tags/, since find's prefilter decodes with it too; re-exported for files/' readers.
export { decodeText, encodeText, MAX_PARSE_BYTES, type TextFile } from '../tags/source-text.js';

/**
 * A regular file's bytes in four system calls (open, fstat, read, close), or null when the path
 * is not a regular file. Synchronous, for passes over whole trees: the promise API's thread-pool
 * round trip per call costs several times the calls. Opened non-blocking, so a FIFO put in a
 * file's place cannot block. A file that grows after the fstat is read up to its size then: the
 * write that grew it is reported like any other. Throws the system error (ENOENT, EACCES, ...).
 */
export function readRegularFileSync(path: string): Buffer | null {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return null;
    const { size } = info;
    if (size > MAX_PARSE_BYTES) return readFileSync(fd);
    const bytes = Buffer.allocUnsafe(size);
    let filled = 0;
    while (filled < size) {
      const read = readSync(fd, bytes, filled, size - filled, null);
      if (read === 0) break;
      filled += read;
    }
    return bytes.subarray(0, filled);
  } finally {
    closeSync(fd);
  }
}

export async function statFile(path: string): Promise<import('node:fs').BigIntStats> {
  let info;
  try {
    info = await stat(path, { bigint: true });
  } catch (error) {
    throw fileError(path, error);
  }
  if (!info.isFile()) throw new EngineError(`Not a regular file: ${path}`);
  return info;
}

export async function readTextFile(path: string): Promise<{ file: TextFile; bytes: Buffer }> {
  const info = await statFile(path);
  if (info.size > BigInt(MAX_PARSE_BYTES)) {
    throw new EngineError(
      `File too large to parse safely: ${path} (${info.size} bytes, limit ${MAX_PARSE_BYTES})`,
    );
  }
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw fileError(path, error);
  }
  const file = decodeText(bytes);
  if (!file) throw new EngineError(`Not a UTF-8 text file: ${path}`);
  return { file, bytes };
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
