/**
 * An agent's copy of its request that was not published (its edits clashed with the branch's,
 * its done did not count, its lease moved on), or any changed copy reset in the checkout: kept
 * beside the daemon's checkout as text (`.txt`), so none of its tags reads as the queue's.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { messageOf } from '../errors.js';

/** Says where the copy is kept, or why it could not be. */
export async function keepAgentCopy(
  checkoutDir: string,
  copy: { item: string; attempt: number; text: string },
): Promise<string> {
  return keepText(checkoutDir, `${copy.item}-attempt-${copy.attempt}.request.txt`, copy.text);
}

/**
 * A changed copy in the checkout no lease of this daemon is behind (an agent this daemon no
 * longer knows of, its lease gone while the daemon was stopped; a stray write), kept before its
 * reset by its path and the time. Says where, or why not.
 */
export async function keepResetCopy(
  checkoutDir: string,
  copy: { path: string; text: string; at: Date },
): Promise<string> {
  const stamp = copy.at.toISOString().replace(/[:.]/g, '-');
  // A few random letters: two paths may read alike once their separators are replaced.
  const name = `${copy.path.replace(/[^\w.-]+/g, '_')}-reset-${stamp}-${randomBytes(3).toString('hex')}.txt`;
  return keepText(checkoutDir, name, copy.text);
}

async function keepText(checkoutDir: string, name: string, text: string): Promise<string> {
  const dir = `${checkoutDir}.kept`;
  const kept = join(dir, name);
  return mkdir(dir, { recursive: true })
    .then(() => writeFile(kept, text))
    .then(
      () => `its copy is kept at ${kept}`,
      (error: unknown) => `its copy could not be kept: ${messageOf(error)}`,
    );
}
