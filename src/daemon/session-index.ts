/**
 * Which sessions belong to which request: read from the session directories' `.state.json`
 * files at start and extended as the daemon creates sessions. Used only to recognise an editor
 * that saved an older copy over a live claim; the files stay the truth.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import PQueue from 'p-queue';
import { SESSIONS_DIR } from '../sessions/session-dir.js';
import { readStateRecord, type SessionState } from '../sessions/session-state.js';

/** A session whose record is not `abandoned`: it may run still, or have ended done unseen. */
export interface UnendedSession {
  dir: string;
  state: SessionState;
}

/** Session records read at once at start. */
const READS_AT_ONCE = 16;

export class SessionIndex {
  private readonly byRequest = new Map<string, Set<string>>();

  constructor(private readonly root: string) {}

  /** Reads every session record; resolves to those not `abandoned`. */
  async load(): Promise<UnendedSession[]> {
    const dir = join(this.root, SESSIONS_DIR);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    const dirs = entries
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
      .map((entry) => join(dir, entry.name));
    // Side by side, a few at a time: one after another, 500 directories kept the daemon's start
    // waiting about 100 ms; all at once, thousands would run out of file descriptors.
    const reading = new PQueue({ concurrency: READS_AT_ONCE });
    const reads = await reading.addAll(dirs.map((d) => () => readStateRecord(d)));
    const unended: UnendedSession[] = [];
    for (const [i, read] of reads.entries()) {
      const sessionDir = dirs[i] as string;
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
