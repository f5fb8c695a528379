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
import { MAX_PARSE_BYTES, readRequestFile, type TextRead } from '../files/read-text-file.js';
import { claimOf, twoStatesProblem, workItemsOf, type WorkItem } from '../dispatch/work-items.js';
import { readiness, readyAtOf, type Readiness } from '../dispatch/work-order.js';
import type { ScanSummary } from '../tags/scan-pool.js';
import { parseTagPattern, type TagPattern } from '../tags/tag-name.js';
import { walkMarkdownFiles } from '../tags/walk-markdown.js';
import type { DaemonShared } from './daemon-shared.js';

/** A work item as read, with when it may be claimed. */
export type PlannedItem = WorkItem & Readiness;

export class RequestReader {
  private readonly patterns: TagPattern[];
  private watchedRoots: string[] | null = null;

  constructor(private readonly shared: DaemonShared) {
    this.patterns = shared.ctx.options.monitor.map(parseTagPattern);
  }

  /** Reads every file that contains `delegated-` or `claimed-` (a byte prefilter), in parallel. */
  async allItems(): Promise<PlannedItem[]> {
    const reads = new PQueue({ concurrency: 16 });
    const items: PlannedItem[] = [];
    for (const root of this.shared.ctx.options.paths) {
      for await (const path of walkMarkdownFiles(root)) {
        await reads.onSizeLessThan(64);
        void reads.add(async () => items.push(...(await this.itemsIn(path))));
      }
    }
    await reads.onIdle();
    return items;
  }

  /**
   * The `#delegated-X` work items a file carries now (Tags line or front matter only), each with
   * its readiness (dispatch/work-order.ts), and its claims remembered for the reaper. `read`: the
   * file as just read.
   */
  async itemsIn(path: string, read = this.read(path)): Promise<PlannedItem[]> {
    const scan = read && (await this.scan(path, read));
    const info = scan && (await stat(path).catch(() => null));
    if (!scan || !info) return [];
    const { ctx, ledger } = this.shared;
    const file = await realpath(path).catch(() => path);
    if (!(await this.isInsideWatchedPaths(file))) {
      this.shared.warnOnce(
        `outside:${path}`,
        `skipped ${path}: it resolves to ${file}, outside the watched paths; never written through`,
      );
      return [];
    }
    const facts = { mtimeMs: info.mtimeMs, lastRecovery: scan.lastRecovery };
    const work = workItemsOf(file, scan.occurrences, (noun) => ctx.routes.route(noun, path), {
      patterns: this.patterns,
      readyAt: readyAtOf(facts, ctx.options.debounceMs),
    });
    ledger.setClaims(
      file,
      work.claims.map((claim) => claim.noun),
    );
    for (const twice of work.twoStates) {
      this.shared.warnOnce(
        `two-states:${file}:${twice.tags.join(' ')}`,
        `not dispatching ${path}: ${twoStatesProblem(twice)}`,
      );
    }
    if (work.items.length === 0 || (await this.hasOtherNames(file, info))) return [];
    const { wait } = readiness(
      { ...facts, claim: claimOf(work) },
      ctx.options.debounceMs,
      ctx.now().getTime(),
    );
    return work.items.map((item) => ({ ...item, wait }));
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
   * A request file that may carry work or a claim (a byte prefilter); null when it does not, or
   * (a skip logged once) cannot be read. Synchronous on purpose (see readRequestFile).
   */
  private read(path: string): TextRead | null {
    const read = readRequestFile(path, ['delegated-', 'claimed-']);
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
