/**
 * The daemon's log: one readable line per event, or JSON lines with --log-format json; on stderr,
 * or appended to --log-file instead.
 */
import type { LogFn } from '../daemon/daemon-context.js';
import { messageOf } from '../errors.js';
import type { LogFile } from '../service/log-file.js';

export function createLogger(format: 'text' | 'json', verbose = false, file?: LogFile): LogFn {
  const write = file ? toFile(file) : (line: string) => process.stderr.write(line);
  return (level, message, fields = {}) => {
    if (level === 'debug' && !verbose) return;
    const time = new Date().toISOString();
    if (format === 'json') {
      write(`${JSON.stringify({ time, level, msg: message, ...fields })}\n`);
      return;
    }
    write(`${time} ${level.toUpperCase().padEnd(5)} ${oneLine(message)}\n`);
  };
}

/** The file, and stderr for a line the file refuses (a full disk): the log is never dropped. */
function toFile(file: LogFile): (line: string) => void {
  let failing = false;
  return (line) => {
    try {
      file.write(line);
      failing = false;
    } catch (error) {
      if (!failing)
        process.stderr.write(`WARN: cannot write the log file ${file.path}: ${messageOf(error)}\n`);
      failing = true;
      process.stderr.write(line);
    }
  };
}

/**
 * A message as one line: it may quote what an agent or a file said (a question, a reason), and a
 * line ending, control character or line separator there must not forge a line of the log (or of
 * a listing: claim-lines.ts shows other hosts' claim records through it).
 */
export function oneLine(message: string): string {
  return message.replace(/\r?\n/g, ' \u21b5 ').replace(/[\p{Cc}\p{Zl}\p{Zp}]/gu, '\uFFFD');
}
