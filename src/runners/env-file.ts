/**
 * How the tmux runner hands an agent its environment. A new tmux pane starts with the tmux
 * SERVER's environment, from whenever that server started, so a changed or removed variable would
 * never reach it; and `-e NAME=value` would put every value, secrets included, in the tmux client's
 * argv, which other users can read in /proc/<pid>/cmdline, within tmux's ~16 KB command. Instead:
 *
 * 1. The runner writes the environment to a file of its own, `<tmpdir>/engine-env-<random>`,
 *    created exclusively (never through a link someone else put there) with mode 0600, and never
 *    in the project (sessions/ may be committed).
 * 2. The pane runs `ENV_LOADER`, a constant sh script, with the file and the agent's argv as its
 *    positional parameters. It opens the file, deletes it, and execs `env -i` with only the
 *    variables tmux set for this pane (`PANE_ENV_KEYS`) into a second /bin/sh, which reads the
 *    file from the open descriptor and execs the argv. Every step execs: the pane's pid is the
 *    agent's.
 *
 * Each value is written single-quoted (`shellQuote`), which a POSIX shell reads back byte for byte
 * whatever it holds (newlines, quotes, `$(...)`, non-ASCII): no value is ever run. Each line is
 * `command export NAME='value'`: a variable the shell refuses (bash keeps UID read-only) is
 * skipped with the shell's message, and the others are still set.
 */
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngineError, messageOf } from '../errors.js';
import { shellQuote } from './runner.js';

/**
 * What tmux sets in a new pane's environment that describes the pane itself; PWD is its `-c`
 * directory as given, which the shell keeps (without it, the shell would use the physical path).
 */
const PANE_ENV_KEYS = ['TERM', 'TERM_PROGRAM', 'TERM_PROGRAM_VERSION', 'TMUX', 'TMUX_PANE', 'PWD'];

/** `$0` of the loader: what `ps` shows for it while it runs. */
const LOADER_NAME = 'engine-env';

export const ENV_LOADER = [
  'f=$1',
  'shift',
  `[ -r "$f" ] || { printf 'engine: cannot read the agent environment %s\\n' "$f" >&2; exit 126; }`,
  'exec 3< "$f"',
  'rm -f -- "$f"',
  // An unset variable adds no argument; a set one adds exactly one, whatever its value.
  `exec /usr/bin/env -i ${PANE_ENV_KEYS.map((key) => `\${${key}+"${key}=$${key}"}`).join(' ')} \\`,
  `  /bin/sh -c '. /dev/fd/3; exec 3<&-; exec "$@"' "$0" "$@"`,
].join('\n');

/** The file's text: one `command export NAME='value'` line per variable. */
export function envFileText(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([key, value]) => `command export ${key}=${shellQuote(value)}\n`)
    .join('');
}

/**
 * Writes `env` (names already checked by `agentEnv`) to a new private file; resolves to its path.
 * The loader deletes it; a caller whose launch failed deletes it itself.
 */
export async function writeEnvFile(env: Record<string, string>): Promise<string> {
  const file = join(tmpdir(), `engine-env-${randomBytes(12).toString('hex')}`);
  try {
    await writeFile(file, envFileText(env), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    await rm(file, { force: true });
    throw new EngineError(`cannot write the agent's environment to ${file}: ${messageOf(error)}`, {
      cause: error,
    });
  }
  return file;
}

/** The command that runs `argv` with the environment in `file`. */
export function envLoaderArgv(file: string, argv: readonly string[]): string[] {
  return ['/bin/sh', '-c', ENV_LOADER, LOADER_NAME, file, ...argv];
}
