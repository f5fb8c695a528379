/** The CLI's only ways to speak: results on stdout, messages on stderr. */
export function printLine(line = ''): void {
  process.stdout.write(`${line}\n`);
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function warn(message: string): void {
  process.stderr.write(`WARN: ${message}\n`);
}

export function printError(message: string): void {
  process.stderr.write(`ERROR: ${message}\n`);
}
