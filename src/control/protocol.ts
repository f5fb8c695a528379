/**
 * The control socket's protocol: newline-delimited JSON over a Unix socket, one request and one
 * answer per line, matched by `id`. A connection opens with `hello`, which names the engine
 * version; the daemon answers only a client of its own version (another one reads the files).
 * Kept free of runtime imports beyond node's: the CLI's lean path loads it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StatusJudging, StatusReport } from '../status/collect-status.js';
import type { GivenPath, IndexFindResult } from '../index/find-in-index.js';

export type { GivenPath, IndexFindResult } from '../index/find-in-index.js';

/** Bumped when a message changes shape. */
const PROTOCOL = 1;

/** What `hello` must name: the protocol and the engine package's version. */
export const CONTROL_VERSION = `${PROTOCOL}/${packageVersion()}`;

/** A line longer than this ends the connection: no client of ours sends one. */
export const MAX_LINE_BYTES = 1024 * 1024;

/** The control socket of a root's daemon: in a directory only its owner may enter. */
export function controlSocketPath(root: string): string {
  return join(root, 'sessions', '.engine', 'control', 'control.sock');
}

/** sun_path holds 108 bytes with its NUL on Linux: a longer path cannot be bound. */
export const MAX_SOCKET_PATH_BYTES = 107;

export interface FindQuery {
  pattern: string;
  tagsOnly: boolean;
  paths: GivenPath[];
}

/** `engine status`'s question: the client's settings and clock, so the answer is the same. */
export interface StatusQuery {
  paths: string[];
  /** §TAG_DISPATCH as the client read it. */
  table: { text: string; path: string };
  judging: Omit<StatusJudging, 'now' | 'probe'> & { nowMs: number };
}

/**
 * `engine status`'s question when it wants the printed text: the daemon renders it (the client
 * loads no renderer and parses no report of several MB), as the client would have.
 */
export interface StatusTextQuery extends StatusQuery {
  json: boolean;
  /** The table as the report names it (the client's reading). */
  shown: ShownTable;
}

/** The dispatch table a report names: its file, and whether it is the one shipped with engine. */
export interface ShownTable {
  path: string;
  shipped: boolean;
}

/** The text of a status report as the CLI prints it, without its final newline. */
export type RenderStatus = (
  report: StatusReport,
  shown: ShownTable,
  json: boolean,
  now: Date,
) => string;

export type Request =
  | { id: number; op: 'hello'; version: string }
  | ({ id: number; op: 'find' } & FindQuery)
  | ({ id: number; op: 'status' } & StatusQuery)
  | ({ id: number; op: 'status-text' } & StatusTextQuery)
  | { id: number; op: 'subscribe' };

export type Answer =
  | { id: number; ok: true; result: unknown }
  /** The daemon cannot answer this (not its version, a path outside its roots, no sync): read the files. */
  | { id: number; ok: false; error: string };

/** A notice on a subscribed connection: something changed; ask again. */
export interface ChangeNotice {
  event: 'changed';
}

export type FindAnswer = IndexFindResult;
export type StatusAnswer = StatusReport;
/** `status-text`'s answer: the bytes to print, without their final newline. */
export type StatusTextAnswer = string;

function packageVersion(): string {
  const path = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
}
