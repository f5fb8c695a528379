/**
 * An agent's copy of its request that was not published (its edits clashed with the branch's,
 * its done did not count, its lease moved on): kept beside the daemon's checkout as text, named
 * `<item>-attempt-<n>.request.txt`, so none of its tags reads as the queue's.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { messageOf } from '../errors.js';

/** Says where the copy is kept, or why it could not be. */
export async function keepAgentCopy(
  checkoutDir: string,
  copy: { item: string; attempt: number; text: string },
): Promise<string> {
  const dir = `${checkoutDir}.kept`;
  const kept = join(dir, `${copy.item}-attempt-${copy.attempt}.request.txt`);
  return mkdir(dir, { recursive: true })
    .then(() => writeFile(kept, copy.text))
    .then(
      () => `its agent's copy is kept at ${kept}`,
      (error: unknown) => `its agent's copy could not be kept: ${messageOf(error)}`,
    );
}
