/**
 * Which sessions belong to which request: read from the session directories' `.state.json`
 * files at start and extended as the daemon creates sessions. Used only to recognise an editor
 * that saved an older copy over a live claim; the files stay the truth.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SESSIONS_DIR } from '../sessions/session-dir.js';
import { readStateRecord, type SessionState } from '../sessions/session-state.js';

/** A session whose record is not `abandoned`: it may run still, or have ended done unseen. */
export interface UnendedSession {
  dir: string;
  state: SessionState;
}

export class SessionIndex {
  private readonly byRequest = new Map<string, Set<string>>();

  constructor(private readonly root: string) {}

  /** Reads every session record; resolves to those not `abandoned`. */
  async load(): Promise<UnendedSession[]> {
    const dir = join(this.root, SESSIONS_DIR);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    const unended: UnendedSession[] = [];
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const sessionDir = join(dir, entry.name);
      const read = await readStateRecord(sessionDir);
      if (!('state' in read)) continue;
      this.add(read.state.requestFile, read.state.sessionRef);
      if (read.state.status !== 'abandoned') unended.push({ dir: sessionDir, state: read.state });
    }
    return unended;
  }

  add(requestFile: string, sessionRef: string): void {
    let set = this.byRequest.get(requestFile);
    if (!set) this.byRequest.set(requestFile, (set = new Set()));
    set.add(sessionRef);
  }

  sessionsOf(requestFile: string): string[] {
    return [...(this.byRequest.get(requestFile) ?? [])];
  }
}
