/** Writes a file by temp file, fsync and rename, so readers never see half a record. */
import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  await writeTextAtomic(path, `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * `stillWanted`, if given, is asked after the temp file is written and right before the rename;
 * false leaves `path` as it is (the temp file removed) and returns false.
 */
export async function writeTextAtomic(
  path: string,
  text: string,
  stillWanted?: () => Promise<boolean>,
): Promise<boolean> {
  const temp = join(
    dirname(path),
    `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
  const handle = await open(temp, 'wx', 0o644);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    if (stillWanted !== undefined && !(await stillWanted())) {
      await unlink(temp);
      return false;
    }
    await rename(temp, path);
    return true;
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}
