/**
 * Creates a file whole or not at all, never over anything at its path: the content is written to
 * a hidden temporary file beside it and fsynced, then linked into place (link fails with EEXIST
 * when the path exists, whatever is there, even a dangling symlink), so no reader ever sees a
 * partial file. Used for the daemon's lock and for the files `engine init` writes.
 */
import { randomBytes } from 'node:crypto';
import { link, open, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** True when created; false when something was already at `path`. Throws other system errors. */
export async function createWhole(path: string, content: string): Promise<boolean> {
  const temp = join(
    dirname(path),
    `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
  const handle = await open(temp, 'wx', 0o644);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}
