/**
 * The daemon's log file (--log-file): lines appended, and at a size cap the file moved to
 * `PATH.1` (replacing the older one) and started anew, so a long-running service keeps at most
 * twice the cap on disk. Writes are synchronous, as stderr's are: a line is on disk before the
 * daemon goes on, and none is lost when it exits.
 */
import { closeSync, fstatSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { EngineError, messageOf } from '../errors.js';

export const LOG_FILE_CAP_BYTES = 10 * 1024 * 1024;

export interface LogFile {
  path: string;
  /** Appends one line (with its newline); throws what the filesystem said. */
  write(line: string): void;
}

/** Opens `path` for appending (its directory made if missing); a clear error if it cannot. */
export function openLogFile(path: string, capBytes = LOG_FILE_CAP_BYTES): LogFile {
  let fd = openAppend(path);
  let size = fstatSync(fd).size;
  let warned = false;
  // Rename first and close after: a failed rename keeps the old file, still open, to append to;
  // fd never names a closed number the kernel may hand to another file.
  const rotate = (): { ok: true } | { ok: false; reason: string } => {
    try {
      renameSync(path, `${path}.1`);
    } catch (error) {
      return { ok: false, reason: messageOf(error) };
    }
    const old = fd;
    fd = openAppend(path);
    size = 0;
    closeSync(old);
    return { ok: true };
  };
  return {
    path,
    write(line) {
      const bytes = Buffer.from(line);
      // A line larger than the cap still goes whole into a file of its own.
      if (size > 0 && size + bytes.length > capBytes) {
        const moved = rotate();
        if (!moved.ok && !warned) {
          const warning = `WARN: cannot move the log file to ${path}.1 (${moved.reason}); it grows past its cap\n`;
          size += writeSync(fd, warning);
        }
        warned = !moved.ok;
      }
      writeSync(fd, bytes);
      size += bytes.length;
    },
  };
}

function openAppend(path: string): number {
  try {
    mkdirSync(dirname(path), { recursive: true });
    return openSync(path, 'a', 0o600);
  } catch (error) {
    throw new EngineError(`cannot open the log file ${path}: ${messageOf(error)}`);
  }
}
