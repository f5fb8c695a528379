/**
 * Which sessions belong to which request: read from the session directories' `.state.json`
 * files at start and extended as the daemon creates sessions. Used only to recognise an editor
 * that saved an older copy over a live claim; the files stay the truth.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SESSIONS_DIR } from '../sessions/session-dir.js';
import { readSessionState } from '../sessions/session-state.js';

export class SessionIndex {
  private readonly byRequest = new Map<string, Set<string>>();

  constructor(private readonly root: string) {}

  async load(): Promise<void> {
    const dir = join(this.root, SESSIONS_DIR);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const read = await readSessionState(join(dir, entry.name));
      if ('state' in read) this.add(read.state.requestFile, read.state.sessionRef);
    }
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
