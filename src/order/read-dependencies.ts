/**
 * The IO of `**Depends On**:`: resolves an item's entries against the project root (paths and
 * globs, never outside it), reads each named file through the one reader and the scan, and
 * follows their own entries, a bounded number of files, so a cycle back to the item is seen.
 * The judgement is dispatch/depends-on's. The daemon calls blockersOf when it is about to claim
 * an item (not only when the item was read: a dependency may have changed since), and `engine
 * status` to say what holds an item.
 */
import { realpath } from 'node:fs/promises';
import { isAbsolute, join, posix, relative, sep } from 'node:path';
import picomatch from 'picomatch/posix.js';
import {
  dependencyState,
  judgeDependencies,
  type Blocker,
  type DependencyFile,
  type DependencyGraph,
  type ResolvedEntry,
} from '../dispatch/depends-on.js';
import { messageOf } from '../errors.js';
import { readError, readRequestFile } from '../files/read-text-file.js';
import type { ScanSummary } from '../tags/scan-pool.js';
import { walkMarkdownFiles } from '../tags/walk-markdown.js';

/** The scan of a text: the daemon's worker pool, or `summaryOf(scanTags(text))`. */
export type ScanText = (text: string) => Promise<ScanSummary>;

/** Files read beyond the item's own dependencies, at most: enough for any real chain. */
export const MAX_DEPENDENCY_FILES = 256;

/**
 * What holds the item in `file` (an absolute path below `root`) whose entries are `patterns`
 * (its ScanSummary's `dependsOn`): [] when it is free. Reads the files now.
 */
export async function blockersOf(
  root: string,
  file: string,
  patterns: readonly string[],
  scan: ScanText,
): Promise<Blocker[]> {
  if (patterns.length === 0) return [];
  return judgeDependencies(await readDependencyGraph(root, file, patterns, scan));
}

/** The graph the judgement reads: the item's entries resolved, and the files they lead to. */
export async function readDependencyGraph(
  root: string,
  file: string,
  patterns: readonly string[],
  scan: ScanText,
  maxFiles = MAX_DEPENDENCY_FILES,
): Promise<DependencyGraph> {
  const resolver = new Resolver(root, await realpath(root));
  const self = (await resolver.inside(file)) ?? relative(root, file).split(sep).join('/');
  const dependsOn = await resolver.resolveAll(patterns, self);
  const files = new Map<string, DependencyFile>();
  const queue = named(dependsOn);
  // The item's own dependencies are all read; beyond them, at most maxFiles more.
  const bound = queue.length + maxFiles;
  for (let at = queue.shift(); at !== undefined; at = queue.shift()) {
    if (files.has(at) || at === self || files.size >= bound) continue;
    const node = await readDependency(resolver, at, scan);
    files.set(at, node);
    if (node.kind === 'request' && dependencyState(node).state !== 'done')
      queue.push(...named(node.dependsOn));
  }
  return { file: self, dependsOn, files };
}

const named = (entries: ResolvedEntry[]): string[] =>
  entries.flatMap((entry) => (entry.kind === 'files' ? entry.files : []));

async function readDependency(
  resolver: Resolver,
  file: string,
  scan: ScanText,
): Promise<DependencyFile> {
  const path = join(resolver.root, file);
  const read = readRequestFile(path);
  if (read.kind !== 'text') return { kind: 'unreadable', reason: readError(path, read).message };
  let summary: ScanSummary;
  try {
    summary = await scan(read.file.text);
  } catch (error) {
    return { kind: 'unreadable', reason: messageOf(error) };
  }
  return {
    kind: 'request',
    tags: summary.occurrences.filter((o) => o.place !== 'prose').map((o) => o.tag),
    lastRecovery: summary.lastRecovery,
    dependsOn: await resolver.resolveAll(summary.dependsOn, file),
  };
}

/** Entries to files below one root (its real path), each glob's walk made once. */
class Resolver {
  private readonly walks = new Map<string, Promise<Array<{ name: string; file: string }>>>();

  /** `given`: the root as the caller names it; `root`: its real path, which files are below. */
  constructor(
    private readonly given: string,
    readonly root: string,
  ) {}

  /** `holder`'s entries; a glob never matches `holder` itself, a path naming it does. */
  resolveAll(patterns: readonly string[], holder: string): Promise<ResolvedEntry[]> {
    return Promise.all(patterns.map((pattern) => this.resolve(pattern, holder)));
  }

  private async resolve(pattern: string, holder: string): Promise<ResolvedEntry> {
    const relativePath = this.relativeEntry(pattern);
    if (relativePath === null) return { pattern, kind: 'outside-root' };
    const glob = picomatch.scan(relativePath);
    if (!glob.isGlob) {
      const real = await realpath(join(this.root, relativePath)).catch(() => null);
      if (real === null) return { pattern, kind: 'files', files: [] };
      const file = await this.inside(real);
      return file === null
        ? { pattern, kind: 'outside-root' }
        : { pattern, kind: 'files', files: [file] };
    }
    const matches = picomatch(relativePath, { nonegate: true });
    const files = (await this.markdownBelow(glob.base))
      .filter(({ name, file }) => file !== holder && matches(name))
      .map(({ file }) => file);
    return { pattern, kind: 'files', files };
  }

  /** The entry as a normalized path relative to the root, or null when it leads outside. */
  private relativeEntry(pattern: string): string | null {
    const below = (root: string): string | null => {
      const path = isAbsolute(pattern) ? relative(root, pattern).split(sep).join('/') : pattern;
      const normal = posix.normalize(path);
      if (normal === '..' || normal.startsWith('../') || isAbsolute(normal)) return null;
      return normal.replace(/^\.\//, '');
    };
    return below(this.given) ?? below(this.root);
  }

  /** `path` (resolving symlinks) relative to the root, or null when it is outside. */
  async inside(path: string): Promise<string | null> {
    const real = await realpath(path).catch(() => null);
    if (real === null) return null;
    const below = relative(this.root, real);
    if (below === '' || below.startsWith(`..${sep}`) || below === '..' || isAbsolute(below))
      return null;
    return below.split(sep).join('/');
  }

  /**
   * The markdown files below `base` that resolve inside the root: `name`, the path the glob
   * matches (as walked), and `file`, the real one (a symlink's target), both relative to it.
   */
  private markdownBelow(base: string): Promise<Array<{ name: string; file: string }>> {
    let walk = this.walks.get(base);
    if (!walk) {
      walk = (async () => {
        const found: Array<{ name: string; file: string }> = [];
        for await (const path of walkMarkdownFiles(join(this.root, base))) {
          const file = await this.inside(path);
          const name = relative(this.root, path).split(sep).join('/');
          if (file !== null) found.push({ name, file });
        }
        return found;
      })();
      this.walks.set(base, walk);
    }
    return walk;
  }
}
