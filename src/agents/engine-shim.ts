/**
 * `engine` on the agent's PATH: a tiny sh script, `<root>/sessions/.engine/bin/engine`, that runs
 * this same engine (the Node binary and the `dist/cli/main.cjs` of the running daemon). So a
 * skill's `engine tag swap ...` works however engine was installed: npx, a clone, a global
 * install.
 *
 * Both paths are written single-quoted (a `'` as `'\''`): the shell reads them as literal text,
 * so a root or install path holding `$(...)`, quotes, spaces or newlines injects nothing.
 */
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { EngineError } from '../errors.js';
import { shellQuote } from '../runners/runner.js';

/** The directory put first on a Claude agent's PATH. */
export function engineBinDir(root: string): string {
  return join(root, 'sessions', '.engine', 'bin');
}

export function engineShimScript(node: string, main: string): string {
  return `#!/bin/sh\nexec ${shellQuote(node)} ${shellQuote(main)} "$@"\n`;
}

/**
 * Writes the shim whole (temporary file, then rename: an agent running it meanwhile reads the old
 * or the new one, never half of one); resolves to its directory.
 */
export async function writeEngineShim(root: string, node: string, main: string): Promise<string> {
  const dir = engineBinDir(root);
  if (dir.includes(delimiter)) {
    throw new EngineError(
      `cannot put engine on the agent's PATH: ${dir} contains '${delimiter}', PATH's separator`,
    );
  }
  await mkdir(dir, { recursive: true });
  const shim = join(dir, 'engine');
  const temp = `${shim}.${process.pid}.tmp`;
  await writeFile(temp, engineShimScript(node, main));
  await chmod(temp, 0o755);
  await rename(temp, shim);
  return dir;
}

/** `PATH` with `dir` first. */
export function pathWith(dir: string, path: string | undefined): string {
  return path ? `${dir}${delimiter}${path}` : dir;
}
