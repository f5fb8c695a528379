/**
 * A request file's name as a slug: its name without the extension, lower-cased, reduced to
 * `[a-z0-9-]` and cut to 40 characters, for names made of it that must be safe as a branch, a ref
 * or a directory name (worktrees, claim ids). Pure.
 */
import { basename, extname } from 'node:path';

const SLUG_CHARS = 40;

export function fileSlug(path: string): string {
  return (
    basename(path, extname(path))
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, SLUG_CHARS)
      .replace(/-+$/, '') || 'request'
  );
}
