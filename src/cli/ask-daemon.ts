/**
 * `engine status` and `engine tag find` asked of the project's running daemon (its control
 * socket) when the paths lie inside its watched directories; null whenever it cannot answer,
 * and the command then reads the files. Either way the output is the same.
 */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type {
  DaemonClient,
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
  return ask(connectTo(root), (client) => client.find({ pattern, tagsOnly, paths: given }));
}

/**
 * The daemon of `root`, connected now, before the command reads what it will ask: the daemon
 * starts its sync with the watch at the hello (control-server.ts startSyncs). The caller closes
 * it (statusTextFromDaemon does).
 */
export function connectEarly(root: string): Promise<DaemonClient | null> {
  if (declined || asking() === 'never') return Promise.resolve(null);
  return connectTo(root);
}

/** `status`'s printed text from the daemon `connecting` (connectEarly), for `query.paths`. */
export async function statusTextFromDaemon(
  connecting: Promise<DaemonClient | null>,
  query: StatusTextQuery,
): Promise<StatusTextAnswer | null> {
  if (!query.paths.every(isReal)) {
    (await connecting)?.close();
    return null;
  }
  return ask(connecting, (client) => client.statusText(query));
}

async function connectTo(root: string): Promise<DaemonClient | null> {
  const { connectDaemon } = await import('../control/control-client.js');
  return connectDaemon(root);
}

async function ask<T>(
  connecting: Promise<DaemonClient | null>,
  question: (client: DaemonClient) => Promise<T | null>,
): Promise<T | null> {
  const client = await connecting;
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
