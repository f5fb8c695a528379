/**
 * Which sessions belong to which request: read from the session directories' `.state.json`
 * files at start and extended as the daemon creates sessions. Used only to recognise an editor
 * that saved an older copy over a live claim; the files stay the truth.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SESSIONS_DIR } from '../sessions/session-dir.js';
import { readStateRecord } from '../sessions/session-state.js';

export class SessionIndex {
  private readonly byRequest = new Map<string, Set<string>>();

  constructor(private readonly root: string) {}

  /** Reads every session record; resolves to the directories of those still open (`starting`, `running`). */
  async load(): Promise<string[]> {
    const dir = join(this.root, SESSIONS_DIR);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    const open: string[] = [];
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const sessionDir = join(dir, entry.name);
      const read = await readStateRecord(sessionDir);
      if (!('state' in read)) continue;
      this.add(read.state.requestFile, read.state.sessionRef);
      if (read.state.status === 'starting' || read.state.status === 'running')
        open.push(sessionDir);
    }
    return open;
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
