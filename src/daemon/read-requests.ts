/**
 * The daemon's read stage: a settled request file → its tags → the work items it carries, and
 * its claims remembered for the reaper. Files that cannot be read, are not text, resolve outside
 * the watched paths, have more than one name or hold two lifecycle states of one noun are skipped
 * with a warning, once.
 */
import { realpath, stat } from 'node:fs/promises';
import { sep } from 'node:path';
import PQueue from 'p-queue';
import { MAX_PARSE_BYTES, readRequestFile, type TextRead } from '../files/read-text-file.js';
import { twoStatesProblem, workItemsOf, type WorkItem } from '../dispatch/work-items.js';
import type { TagOccurrence } from '../tags/scan-tags.js';
import { parseTagPattern, type TagPattern } from '../tags/tag-name.js';
import { walkMarkdownFiles } from '../tags/walk-markdown.js';
import type { DaemonShared } from './daemon-shared.js';

export class RequestReader {
  private readonly patterns: TagPattern[];
  private watchedRoots: string[] | null = null;

  constructor(private readonly shared: DaemonShared) {
    this.patterns = shared.ctx.options.monitor.map(parseTagPattern);
  }

  /**
   * The start pass over one file, read once: remembers its claims for the first reap, and says
   * whether it may carry work (it then settles like a changed file and is read again).
   */
  async inspectAtStart(path: string): Promise<boolean> {
    const read = this.read(path);
    if (!read) return false;
    if (read.bytes.includes('claimed-')) await this.itemsIn(path, read);
    return read.bytes.includes('delegated-');
  }

  /** Reads every file that contains `delegated-` or `claimed-` (a byte prefilter), in parallel. */
  async allItems(): Promise<WorkItem[]> {
    const reads = new PQueue({ concurrency: 16 });
    const items: WorkItem[] = [];
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
   * The `#delegated-X` work items a file carries now (Tags line or front matter only), and its
   * claims remembered for the reaper. `read`: the file as just read.
   */
  async itemsIn(path: string, read = this.read(path)): Promise<WorkItem[]> {
    const occurrences = read && (await this.scan(path, read));
    if (!occurrences) return [];
    const { ctx, ledger } = this.shared;
    const file = await realpath(path).catch(() => path);
    if (!(await this.isInsideWatchedPaths(file))) {
      this.shared.warnOnce(
        `outside:${path}`,
        `skipped ${path}: it resolves to ${file}, outside the watched paths; never written through`,
      );
      return [];
    }
    const work = workItemsOf(file, occurrences, (noun) => ctx.routes.route(noun, path), {
      patterns: this.patterns,
      readyAt: ctx.now().getTime(),
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
    if (work.items.length > 0 && (await this.hasOtherNames(file))) return [];
    return work.items;
  }

  /**
   * A request file with more than one name (a hard link) is never dispatched: the claim's rename
   * gives the claimed name a new inode, and every other name would still read `#delegated-X`
   * and be claimed and run again.
   */
  async hasOtherNames(file: string): Promise<boolean> {
    const info = await stat(file).catch(() => null);
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
  private async scan(path: string, read: TextRead): Promise<TagOccurrence[] | null> {
    try {
      const { occurrences, problems } = await this.shared.ctx.scan(read.file.text);
      for (const { line, message } of problems) {
        this.shared.warnOnce(`problem:${path}:${line}:${message}`, `${path}:${line}: ${message}`);
      }
      return occurrences;
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
