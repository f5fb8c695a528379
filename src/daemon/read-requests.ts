/**
 * The daemon's read stage: a settled request file → its tags → the work items it carries, and
 * its claims remembered for the reaper. Files that cannot be read, are not text, resolve outside
 * the watched paths, have more than one name or hold two lifecycle states of one noun are skipped
 * with a warning, once.
 */
import type { Stats } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { sep } from 'node:path';
import PQueue from 'p-queue';
import {
  MAX_PARSE_BYTES,
  type NoMatch,
  type ReadProblem,
  type TextRead,
} from '../files/read-text-file.js';
import { realPathOrSelf } from '../files/real-path.js';
import { statOrNull } from '../files/stat-or-null.js';
import { claimOf, twoStatesProblem, workItemsOf } from '../dispatch/work-items.js';
import { readiness, readyAtOf } from '../dispatch/work-order.js';
import { blockersOf } from '../order/read-dependencies.js';
import type { ScanSummary } from '../tags/scan-pool.js';
import { parseTagPattern, type TagPattern } from '../tags/tag-name.js';
import { walkMarkdownFiles } from '../tags/walk-markdown.js';
import { queueRootOf } from './claim-store.js';
import type { DaemonShared } from './daemon-shared.js';
import { NoWorkRecord, noWorkRecordPath } from './no-work-record.js';
import type { FileRead } from './request-snapshot.js';

/** Bytes a file must hold to carry work or a claim: the read's prefilter. */
const NEEDLES: readonly string[] = ['delegated-', 'claimed-'];

type RawRead = TextRead | ReadProblem | NoMatch;

const NO_MATCH: NoMatch = { kind: 'no-match' };

export class RequestReader {
  private readonly patterns: TagPattern[];
  private watchedRoots: string[] | null = null;
  /** The first pass's read of the file it statted last, until readFile takes it. */
  private held: { path: string; read: RawRead } | null = null;
  /** The first pass's no-work record (no-work-record.ts), from startFirstPass to endFirstPass. */
  private noWork: NoWorkRecord | null = null;

  constructor(private readonly shared: DaemonShared) {
    this.patterns = shared.ctx.options.monitor.map(parseTagPattern);
  }

  /**
   * Reads every file that contains `delegated-` or `claimed-` (a byte prefilter), in parallel;
   * `see` gets each read.
   */
  async readAll(see: (read: FileRead) => Promise<void>): Promise<void> {
    const reads = new PQueue({ concurrency: 16 });
    for (const root of this.shared.ctx.options.paths) {
      for await (const path of walkMarkdownFiles(root)) {
        await reads.onSizeLessThan(64);
        void reads.add(async () => {
          const read = await this.readFile(path);
          if (read) await see(read);
        });
      }
    }
    await reads.onIdle();
  }

  /**
   * The `#delegated-X` work items a file carries now (Tags line or front matter only), each with
   * its readiness (dispatch/work-order.ts), and its claims. Null: it cannot be read, or is
   * skipped (outside the watched paths).
   */
  async readFile(path: string): Promise<FileRead | null> {
    const read = this.read(path);
    const scan = read && (await this.scan(path, read));
    // Synchronous, as the read: a promise's thread-pool round trip each, awaited in turn by the
    // first pass, left the main thread idle about 80 ms at 50,000 files.
    const info = scan && statOrNull(path);
    if (!read || !scan || !info) return null;
    const { ctx } = this.shared;
    const file = realPathOrSelf(path);
    if (!(await this.isInsideWatchedPaths(file))) {
      this.shared.warnOnce(
        `outside:${path}`,
        `skipped ${path}: it resolves to ${file}, outside the watched paths; never written through`,
      );
      return null;
    }
    const facts = { mtimeMs: info.mtimeMs, lastRecovery: scan.lastRecovery };
    const work = workItemsOf(file, scan.occurrences, (noun) => ctx.routes.route(noun, path), {
      patterns: this.patterns,
      readyAt: readyAtOf(facts, ctx.options.debounceMs),
    });
    for (const twice of work.twoStates) {
      this.shared.warnOnce(
        `two-states:${file}:${twice.tags.join(' ')}`,
        `not dispatching ${path}: ${twoStatesProblem(twice)}`,
      );
    }
    const claims = work.claims.map((claim) => claim.noun);
    const unrouted = work.delegated
      .filter(({ route }) => !route?.dispatchable)
      .map(({ noun, route }) => ({
        noun,
        why: route ? 'marked not dispatchable' : 'no row in §TAG_DISPATCH',
      }));
    if (work.items.length === 0 || (await this.hasOtherNames(file, info)))
      return { file, items: [], claims, unrouted };
    const { wait } = readiness(
      { ...facts, claim: claimOf(work) },
      ctx.options.debounceMs,
      ctx.now().getTime(),
    );
    const { digest, attempts, priorSession, session, dependsOn } = scan;
    const snapshot = { text: read.file.text, digest, attempts, priorSession, session, dependsOn };
    const blockers = await blockersOf(queueRootOf(ctx), file, dependsOn, ctx.scan);
    const items = work.items.map((item) => ({ ...item, wait, blockers, snapshot }));
    return { file, items, claims, unrouted };
  }

  /**
   * A request file with more than one name (a hard link) is never dispatched: the claim's rename
   * gives the claimed name a new inode, and every other name would still read `#delegated-X`
   * and be claimed and run again.
   */
  async hasOtherNames(file: string, known?: Stats): Promise<boolean> {
    const info = known ?? (await stat(file).catch(() => null));
    if (!info || info.nlink <= 1) return false;
    this.shared.warnOnce(
      `links:${file}:${info.ino}`,
      `skipped ${file}: it has ${info.nlink} names (hard links), and a claim would split them so that another name runs the same request again; give it one name (copy it, or remove the other links) to dispatch it`,
    );
    return true;
  }

  /**
   * The first pass's stat of a file (TreeState's StatFile): the file is read, its fstat (made
   * before the read) is the stat, and the read is kept for readFile's next call on it. One
   * system call a file fewer than a stat and then a read, in the same order. A file that cannot
   * be opened (a socket, no permission) is statted as the pass would; its read says why. A file
   * the no-work record holds unchanged is only statted: its read is `no-match`.
   */
  statAndRead(path: string): Stats | null {
    this.held = null;
    const known = this.noWork?.unchanged(path);
    if (known) {
      this.held = { path, read: NO_MATCH };
      return known;
    }
    let seen: Stats | null = null;
    const readAt = this.shared.ctx.now().getTime();
    const read = this.shared.ctx.readRequest(path, NEEDLES, (info) => {
      seen = info;
    });
    const info = (seen as Stats | null) ?? statOrNull(path);
    if (read.kind === 'no-match' && seen) this.noWork?.keep(path, seen, readAt);
    if (info?.isFile()) this.held = { path, read };
    return info;
  }

  /** Opens the no-work record for the first pass's statAndRead (before the pass). */
  async startFirstPass(): Promise<void> {
    const { options } = this.shared.ctx;
    const file = noWorkRecordPath(options.root);
    this.noWork = await NoWorkRecord.open(file, [...NEEDLES], options.paths);
  }

  /**
   * Writes the next no-work record (after the pass) and lets both go; what it counted, or null
   * when no pass started.
   */
  async endFirstPass(): Promise<{ unread: number; kept: number } | null> {
    const record = this.noWork;
    this.noWork = null;
    if (!record) return null;
    await record.save();
    return record.counts;
  }

  /**
   * A request file that may carry work or a claim (a byte prefilter); null when it does not, or
   * (a skip logged once) cannot be read. Synchronous on purpose (see readRequestFile).
   */
  private read(path: string): TextRead | null {
    const held = this.held;
    this.held = null;
    const read = held?.path === path ? held.read : this.shared.ctx.readRequest(path, NEEDLES);
    if (read.kind === 'text') return read;
    if (read.kind === 'not-text') return this.skip(path, 'not UTF-8 text');
    if (read.kind === 'too-large') return this.skip(path, `larger than ${MAX_PARSE_BYTES} bytes`);
    if (read.kind === 'error')
      return this.skip(path, `cannot read: ${read.error.code ?? read.error.message}`);
    return null;
  }

  /** The tags of a file read by `read`, or null. */
  private async scan(path: string, read: TextRead): Promise<ScanSummary | null> {
    try {
      const summary = await this.shared.ctx.scan(read.file.text);
      for (const { line, message } of summary.problems) {
        this.shared.warnOnce(`problem:${path}:${line}:${message}`, `${path}:${line}: ${message}`);
      }
      return summary;
    } catch (error) {
      return this.skip(path, error instanceof Error ? error.message : String(error));
    }
  }

  private skip(path: string, reason: string): null {
    this.shared.warnOnce(`skip:${path}:${reason}`, `skipped ${path}: ${reason}`);
    return null;
  }

  private async isInsideWatchedPaths(file: string): Promise<boolean> {
    this.watchedRoots ??= await Promise.all(
      this.shared.ctx.options.paths.map((p) => realpath(p).catch(() => p)),
    );
    return this.watchedRoots.some((root) => file === root || file.startsWith(`${root}${sep}`));
  }
}
