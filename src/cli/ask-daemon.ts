/**
 * `engine status` and `engine tag find` asked of the project's running daemon (its control
 * socket) when the paths lie inside its watched directories; null whenever it cannot answer,
 * and the command then reads the files. Either way the output is the same.
 */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type {
  FindAnswer,
  GivenPath,
  StatusTextAnswer,
  StatusTextQuery,
} from '../control/control-client.js';
import { EngineError } from '../errors.js';
import { findProjectRoot } from './project-root.js';

/** Set once the daemon was asked and could not answer: the full CLI then reads the files. */
let declined = false;

/**
 * ENGINE_ASK_DAEMON: `0` never asks the daemon (read the files); `only` fails when the daemon
 * does not answer (tests, benchmarks); anything else asks it when one runs.
 */
function asking(): 'never' | 'only' | 'maybe' {
  const value = process.env.ENGINE_ASK_DAEMON;
  return value === '0' ? 'never' : value === 'only' ? 'only' : 'maybe';
}

/** The files are to be read: refused under ENGINE_ASK_DAEMON=only. */
export function readingFiles(): void {
  if (asking() === 'only')
    throw new EngineError(
      'the daemon did not answer, and ENGINE_ASK_DAEMON=only forbids reading the files',
    );
}

/**
 * `find`'s answer from the daemon of the project around the current directory. Not asked when
 * ENGINE_SCAN_TIMEOUT_MS is set (the daemon parses with its own limit), or when a path is not
 * what its text says: it leads through a symlink (the target may lie outside what the daemon
 * watches), or its `..` or trailing `/` passes through a file or a symlink, or it is not there.
 */
export async function findFromDaemon(
  pattern: string,
  paths: string[],
  tagsOnly: boolean,
): Promise<FindAnswer | null> {
  if (declined || asking() === 'never' || process.env.ENGINE_SCAN_TIMEOUT_MS !== undefined)
    return null;
  const given: GivenPath[] = [];
  for (const path of paths) {
    if (!isReal(path)) return null;
    given.push({ given: path, absolute: resolve(path) });
  }
  const root = await findProjectRoot(process.cwd());
  if (root === null) return null;
  return ask(root, (client) => client.find({ pattern, tagsOnly, paths: given }));
}

/** `status`'s printed text from the daemon of `root`, for `query.paths`. */
export async function statusTextFromDaemon(
  root: string,
  query: StatusTextQuery,
): Promise<StatusTextAnswer | null> {
  if (declined || asking() === 'never' || !query.paths.every(isReal)) return null;
  return ask(root, (client) => client.statusText(query));
}

async function ask<T>(
  root: string,
  question: (client: import('../control/control-client.js').DaemonClient) => Promise<T | null>,
): Promise<T | null> {
  const { connectDaemon } = await import('../control/control-client.js');
  const client = await connectDaemon(root);
  if (!client) return decline();
  try {
    return (await question(client)) ?? decline();
  } finally {
    client.close();
  }
}

function decline(): null {
  declined = true;
  return null;
}

/**
 * Whether the kernel's reading of `path` is its text's: the native realpath walks it as the
 * kernel does (`a.md/`, `a.md/..`: ENOTDIR; `ln/..`: the symlink's target's parent), where
 * resolve() only edits the text. Any error: the files are read, and they say what it is.
 */
export function isReal(path: string): boolean {
  try {
    return realpathSync.native(path) === resolve(path);
  } catch {
    return false;
  }
}
