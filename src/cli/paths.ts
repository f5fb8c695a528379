/** Files shipped with engine, found relative to the built CLI, and the project's table. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EngineError, isErrnoException, messageOf } from '../errors.js';

export const SHIPPED_TAGS = fileURLToPath(new URL('../../directives/TAGS.md', import.meta.url));

/** This engine's entry point: the `engine` that agents find on their PATH runs it. */
export const ENGINE_MAIN = fileURLToPath(new URL('./main.cjs', import.meta.url));

/** Where a project's own §TAG_DISPATCH table is. */
export function projectTablePath(root: string): string {
  return join(root, 'directives', 'TAGS.md');
}

/** The §TAG_DISPATCH text a project uses, and the file it came from. */
export interface TableText {
  path: string;
  text: string;
  /** The project has no directives/TAGS.md: the table shipped with engine is used. */
  shipped: boolean;
}

/** The project's directives/TAGS.md, or the table shipped with engine when it has none. */
export async function readDispatchTable(root: string): Promise<TableText> {
  const own = projectTablePath(root);
  try {
    return { path: own, text: await readFile(own, 'utf8'), shipped: false };
  } catch (error) {
    // Only a missing file means "none": an unreadable one is not silently replaced.
    if (!isErrnoException(error) || error.code !== 'ENOENT')
      throw new EngineError(`cannot read ${own}: ${messageOf(error)}`);
  }
  return { path: SHIPPED_TAGS, text: await readFile(SHIPPED_TAGS, 'utf8'), shipped: true };
}

/** Says that the shipped table is used, and why. */
export function shippedTableNote(root: string): string {
  return `no ${projectTablePath(root)}: using the §TAG_DISPATCH table shipped with engine (${SHIPPED_TAGS})`;
}
