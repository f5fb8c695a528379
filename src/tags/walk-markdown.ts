/**
 * Lists the markdown files under a path. Skips `.git`, `node_modules` and our own lock
 * directories; follows symlinks to files but never symlinked directories, so loops cannot occur.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

export const MARKDOWN_EXTENSIONS = ['.md', '.markdown'];
const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules']);

export function isMarkdownPath(path: string): boolean {
  const lower = path.toLowerCase();
  return MARKDOWN_EXTENSIONS.some((ext) => lower.endsWith(ext));
}

export interface WalkProblem {
  path: string;
  reason: string;
}

/** Yields markdown file paths below `dir`, each as `dir` joined with the path below it. */
export async function* walkMarkdownFiles(
  dir: string,
  onProblem: (problem: WalkProblem) => void = () => undefined,
): AsyncGenerator<string> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR')
      onProblem({ path: dir, reason: `cannot list: ${code}` });
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (SKIPPED_DIRECTORIES.has(entry.name) || entry.name.endsWith('.engine-lock')) continue;
      yield* walkMarkdownFiles(path, onProblem);
    } else if (isMarkdownPath(entry.name)) {
      if (entry.isFile()) yield path;
      else if (entry.isSymbolicLink()) {
        const target = await stat(path).catch(() => null);
        if (target?.isFile()) yield path;
      }
    }
  }
}
