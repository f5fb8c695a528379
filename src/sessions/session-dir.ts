/**
 * Session directories: `<root>/sessions/<date>_<time>_<NOUN>_<slug>_<rand>/` (UTC), one per claim and
 * never reused; a requeued item gets a fresh one that points at the prior one.
 */
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { basename, extname, join, posix } from 'node:path';

export const SESSIONS_DIR = 'sessions';

/**
 * The files of one session directory, each name declared here only; every module reaches them
 * through `sessionDir`. Who writes each: the daemon's record (`state`, one writer:
 * session-status.ts); the wrapper's records (`wrapper`, `agent`, `exit`, `heartbeat`:
 * wrapper-script.ts, read by wrapper-records.ts); the markers, each taken once
 * (session-markers.ts); the transcript the runner appends to (`agentLog`); the hooks' state
 * (`agentState`, agents/agent-state.ts) and their settings (`claudeSettings`,
 * agents/claude-settings.ts); the moved request's path (`requestFile`, daemon/claim-check.ts).
 */
export const SESSION_FILES = {
  state: '.state.json',
  wrapper: '.wrapper',
  agent: '.agent',
  exit: '.exit',
  heartbeat: '.heartbeat',
  startToken: '.started',
  doneEvent: '.done-event',
  done: '.done',
  closeAsked: '.close-asked',
  closeTerm: '.close-term',
  closeKill: '.close-kill',
  closeRequested: '.close-requested',
  cancelled: '.cancelled',
  superseded: '.superseded',
  agentLog: 'agent.log',
  agentState: 'agent-state.json',
  claudeSettings: 'claude-settings.json',
  requestFile: 'request-file',
} as const;
export type SessionFile = keyof typeof SESSION_FILES;

/** A session directory: its path, and the path of each of its files by name. */
export type SessionDir = { readonly path: string } & { readonly [K in SessionFile]: string };

/** The handle of the session directory at `path`. */
export function sessionDir(path: string): SessionDir {
  const files = Object.entries(SESSION_FILES).map(([name, file]) => [name, join(path, file)]);
  return { path, ...Object.fromEntries(files) } as SessionDir;
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** The session's path relative to the root, e.g. `sessions/2026_11_22_074512_FIX_login-bug_3f9a`. */
export function newSessionRef(noun: string, requestFile: string, now: Date): string {
  const date = `${now.getUTCFullYear()}_${pad(now.getUTCMonth() + 1)}_${pad(now.getUTCDate())}`;
  const time = `${pad(now.getUTCHours())}${pad(now.getUTCMinutes())}${pad(now.getUTCSeconds())}`;
  const slug =
    basename(requestFile, extname(requestFile))
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'request';
  const nounPart = noun.toUpperCase().replace(/[^A-Z0-9]+/g, '_');
  return posix.join(SESSIONS_DIR, `${date}_${time}_${nounPart}_${slug}_${randomBytes(4).toString('hex')}`);
}

/** The claim time encoded in a session name by `newSessionRef`, or null when it holds none. */
export function claimTime(ref: string): number | null {
  const m = /(\d{4})_(\d{2})_(\d{2})_(\d{2})(\d{2})(\d{2})_/.exec(ref);
  if (!m) return null;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  return Date.UTC(y as number, (mo as number) - 1, d, h, mi, s);
}

/** Creates the directory; it must not exist (a session is never reused). */
export async function createSessionDir(root: string, ref: string): Promise<string> {
  const dir = join(root, ref);
  await mkdir(join(root, SESSIONS_DIR), { recursive: true });
  await mkdir(dir);
  return dir;
}

/** Resolves a Session line value; refuses anything that would leave the root. */
export function resolveSessionRef(root: string, ref: string): string | null {
  const normal = posix.normalize(ref.replace(/\/+$/, ''));
  if (posix.isAbsolute(normal) || normal.startsWith('..') || !normal.startsWith(`${SESSIONS_DIR}/`)) return null;
  return join(root, normal);
}
