/** Whether a path exists: false only when it does not (ENOENT); any other error is thrown. */
import { stat } from 'node:fs/promises';
import { isErrnoException } from '../errors.js';

export async function pathExists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (isErrnoException(error) && error.code === 'ENOENT') return false;
    throw error;
  }
}
