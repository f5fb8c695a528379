/**
 * Racing `engine` processes for the claim tests (test/files/racer.mjs): each reports on fd 3, one
 * line at a time. A warm racer runs the built CLI once per round, in the same process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { CliResult } from './run-cli.js';

export const RACER = fileURLToPath(new URL('../files/racer.mjs', import.meta.url));

/** Lines written by a child on fd 3, one promise per line, in order. */
export function fd3Lines(child: ChildProcess): () => Promise<string> {
  const lines: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  let buffer = '';
  let closed = false;
  const stream = child.stdio[3] as NodeJS.ReadableStream;
  stream.setEncoding('utf8');
  stream.on('data', (data: string) => {
    buffer += data;
    for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      const next = waiting.shift();
      if (next) next(line);
      else lines.push(line);
    }
  });
  stream.on('end', () => (closed = true));
  return () => {
    const line = lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (closed) return Promise.reject(new Error('racer closed fd 3'));
    return new Promise((resolve) => waiting.push(resolve));
  };
}

export interface RoundReport extends CliResult {
  round: number;
}

/**
 * A warm racer process working in `cwd`; `track` hands it to whatever kills it after the test.
 * `ready` resolves once its modules are loaded.
 */
export function warmRacer(
  cwd: string,
  track: (child: ChildProcess) => ChildProcess,
): { ready: Promise<string>; run(round: number, args: string[]): Promise<RoundReport> } {
  const child = track(
    spawn(process.execPath, [RACER], { cwd, stdio: ['pipe', 'inherit', 'inherit', 'pipe'] }),
  );
  const next = fd3Lines(child);
  return {
    ready: next(),
    run: async (round, args) => {
      child.stdin?.write(`${JSON.stringify({ round, args })}\n`);
      return JSON.parse(await next()) as RoundReport;
    },
  };
}
