/**
 * The CLI's only ways to speak: results on stdout, messages on stderr. Text written to a
 * terminal shows its control characters in caret notation (visible-text.ts): a request file's
 * title or name cannot recolour it or set its title; piped, the text stays as it is.
 */
import { caretNotation } from '../transcript/visible-text.js';

let quietOnClosedPipe = false;

/**
 * A reader that stops early (`engine tag find ... | head -1`) closes the pipe: stop quietly, as
 * other command-line tools do, instead of crashing on an unhandled EPIPE. Only commands that
 * print results install this; nothing is left to do once nobody reads them.
 */
function writeResult(text: string | Uint8Array): boolean {
  if (!quietOnClosedPipe) {
    quietOnClosedPipe = true;
    process.stdout.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(0);
      throw error;
    });
  }
  return process.stdout.write(typeof text === 'string' ? onTerminal(text, process.stdout) : text);
}

function onTerminal(text: string, stream: NodeJS.WriteStream): string {
  return stream.isTTY ? caretNotation(text) : text;
}

/** Bytes as they are (a transcript), waiting while stdout's buffer is full. */
export async function printBytes(data: Uint8Array): Promise<void> {
  if (!writeResult(data)) await new Promise((resolve) => process.stdout.once('drain', resolve));
}

export function printLine(line = ''): void {
  writeResult(`${line}\n`);
}

/**
 * Each line, in one write: a write per line cost `engine tag find` 1 to 2 ms of CPU at 1,000
 * paths.
 */
export function printLines(lines: readonly string[]): void {
  if (lines.length > 0) writeResult(`${lines.join('\n')}\n`);
}

export function printJson(value: unknown): void {
  writeResult(`${JSON.stringify(value, null, 2)}\n`);
}

export function warn(message: string): void {
  process.stderr.write(onTerminal(`WARN: ${message}\n`, process.stderr));
}

export function printError(message: string): void {
  process.stderr.write(onTerminal(`ERROR: ${message}\n`, process.stderr));
}
