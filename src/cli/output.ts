/** The CLI's only ways to speak: results on stdout, messages on stderr. */

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
  return process.stdout.write(text);
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
  process.stderr.write(`WARN: ${message}\n`);
}

export function printError(message: string): void {
  process.stderr.write(`ERROR: ${message}\n`);
}
