/**
 * What the reconcile pass remembers of the watched trees, directory by directory: each
 * directory's identity (inode and ctime, which change when an entry is added, removed or renamed,
 * or the directory's mode changes) and each markdown file's size, mtime and inode. A full pass
 * stats every file; a directory pass stats only the directories and lists again only those whose
 * identity changed, so it finds every file created, deleted or saved by rename (how editors and
 * engine itself save), not a write in place. It does stat, in every directory, the files whose
 * writes the directory's watch may not see: symlinks (their target is written elsewhere) and
 * files with more than one hard link (written through another name). The walk is the one of walkMarkdownFiles: the same
 * ignore rules, symlinks to files followed, symlinked directories never.
 */
import { readdirSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { statOrNull } from '../files/stat-or-null.js';
import { markdownEntries } from '../tags/walk-markdown.js';
import { FileTable, FileTableBuilder } from './file-table.js';

interface DirRecord {
  ino: number;
  ctimeMs: number;
  /**
   * The markdown files found at the last listing, by name (stats are numbers, not bigints: a full
   * pass stats every file, and bigint stats cost a fifth more CPU).
   */
  files: FileTable;
  /** Names of the subdirectories walked. */
  dirs: string[];
  /** Names of the symlinks (valid or not) and hard-linked files: statted by every pass. */
  linked: string[];
}

export type PassKind = 'full' | 'directories';

/** Sees each file a pass stats: `changed` when it is new or its size, mtime or inode changed. */
export type PassVisit = (path: string, info: Stats, changed: boolean) => Promise<void> | void;

/**
 * How a full pass stats a listed file (following a symlink), null when it is gone: by default a
 * stat; the daemon's first pass opens the file and takes the fstat of its read instead.
 */
export type StatFile = (path: string) => Stats | null;

export class TreeState {
  private readonly records = new Map<string, DirRecord>();

  /** `gone`: told of each markdown file a pass no longer finds (the daemon's tag index drops it). */
  constructor(private readonly gone: (path: string) => void = () => {}) {}

  /** The stat of a listed file, for the pass under way. */
  private statFile: StatFile = statOrNull;

  /** One pass over the tree at `root`; `stopped` ends it early (the watcher closed). */
  async pass(
    root: string,
    kind: PassKind,
    visit: PassVisit,
    stopped: () => boolean,
    statFile: StatFile = statOrNull,
  ): Promise<void> {
    this.statFile = statFile;
    try {
      if (kind === 'full') await this.list(root, visit, stopped, 'full');
      else await this.checkDirectories(root, visit, stopped);
    } finally {
      this.statFile = statOrNull;
    }
  }

  private async checkDirectories(
    dir: string,
    visit: PassVisit,
    stopped: () => boolean,
  ): Promise<void> {
    const record = this.records.get(dir);
    const info = statOrNull(dir);
    if (!record || !info || info.ino !== record.ino || info.ctimeMs !== record.ctimeMs) {
      await this.list(dir, visit, stopped, 'directories');
      return;
    }
    for (const name of record.linked) await this.checkFile(dir, name, record, visit);
    for (const name of record.dirs) {
      if (stopped()) return;
      await this.checkDirectories(join(dir, name), visit, stopped);
    }
  }

  /** Stats one file of an unchanged directory again: visited when changed, told when gone. */
  private async checkFile(
    dir: string,
    name: string,
    record: DirRecord,
    visit: PassVisit,
  ): Promise<void> {
    const path = join(dir, name);
    const stats = statOrNull(path);
    if (!stats?.isFile()) {
      if (!record.files.has(name)) return;
      record.files = record.files.without(name);
      this.gone(path);
      return;
    }
    if (record.files.same(name, stats)) return;
    record.files = record.files.with(name, stats);
    await visit(path, stats, true);
  }

  /**
   * Lists `dir` and stats every markdown file in it; below it, lists every directory (a full
   * pass) or those that are new or changed. The directory is statted before it is listed: an
   * entry changed after that shows at the next pass.
   */
  private async list(
    dir: string,
    visit: PassVisit,
    stopped: () => boolean,
    below: PassKind,
  ): Promise<void> {
    const old = this.records.get(dir);
    const info = statOrNull(dir);
    let entries;
    try {
      if (!info?.isDirectory()) throw new Error('not a directory');
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      this.forget(dir);
      return;
    }
    const record: DirRecord = {
      ino: info.ino,
      ctimeMs: info.ctimeMs,
      files: FileTable.EMPTY,
      dirs: [],
      linked: [],
    };
    this.records.set(dir, record);
    // Lets watch events in between directories.
    await new Promise((resolve) => setImmediate(resolve));
    const files = new FileTableBuilder();
    try {
      for (const { name, path, kind } of markdownEntries(dir, entries)) {
        if (stopped()) return;
        if (kind === 'directory') {
          record.dirs.push(name);
          if (below === 'full') await this.list(path, visit, stopped, below);
          else await this.checkDirectories(path, visit, stopped);
          continue;
        }
        const info = this.statFile(path);
        if (kind === 'link' || (info && info.nlink > 1)) record.linked.push(name);
        if (!info || (kind === 'link' && !info.isFile())) continue;
        files.add(name, info);
        await visit(path, info, !old?.files.same(name, info));
      }
    } finally {
      // In a finally: a pass stopped or failed part way keeps what it listed, as a Map filled
      // file by file did. Passes run one at a time (request-watcher.ts): none reads the table
      // before it is made. An unchanged directory keeps its table, so the tables and names a
      // full pass builds mostly die young (they grew the heap at each pass).
      const built = files.build();
      record.files = old?.files.equals(built) ? old.files : built;
    }
    const walked = new Set(record.dirs);
    for (const name of old?.dirs ?? []) if (!walked.has(name)) this.forget(join(dir, name));
    for (const name of old?.files.names ?? [])
      if (!record.files.has(name)) this.gone(join(dir, name));
  }

  private forget(dir: string): void {
    const record = this.records.get(dir);
    if (!record) return;
    this.records.delete(dir);
    for (const name of record.files.names) this.gone(join(dir, name));
    for (const name of record.dirs) this.forget(join(dir, name));
  }
}
