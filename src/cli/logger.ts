/** The daemon's log: one readable line per event on stderr, or JSON lines with --log-format json. */
import type { LogFn } from '../daemon/daemon-context.js';

export function createLogger(format: 'text' | 'json', verbose = false): LogFn {
  return (level, message, fields = {}) => {
    if (level === 'debug' && !verbose) return;
    const time = new Date().toISOString();
    if (format === 'json') {
      process.stderr.write(`${JSON.stringify({ time, level, msg: message, ...fields })}\n`);
      return;
    }
    process.stderr.write(`${time} ${level.toUpperCase().padEnd(5)} ${oneLine(message)}\n`);
  };
}

/**
 * A message as one line: it may quote what an agent or a file said (a question, a reason), and a
 * line ending or control character there must not forge a line of the log.
 */
export function oneLine(message: string): string {
  return message.replace(/\r?\n/g, ' \u21b5 ').replace(/\p{Cc}/gu, '\uFFFD');
}
