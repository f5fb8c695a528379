/**
 * The request's text a done publishes on the shared branch. The agent works on the checkout's
 * copy of its request (its `## Response`, its notes, the `#done-X` swap): that copy is its work,
 * published merged three-way onto the branch's text as it is now, from the text the copy was
 * edited from, so that a human's edits pushed meanwhile are kept as well (two additions at the
 * end both kept, the branch's first). When the two clash, or the agent's copy is unknown, only
 * the Tags swap is published (the caller keeps the copy and says
 * so). Publishing the Tags swap alone lost every agent's Response.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runGit } from '../process/run-git.js';
import { carrierTags } from '../tags/edit-tags.js';
import { scanTags } from '../tags/scan-tags.js';

/** The done's Tags swap: the text with `#done-X`, or null when it no longer shows the claim. */
export type DoneSwap = (text: string) => string | null;

export interface DoneText {
  /** The done's text over the branch's text now; null when that no longer shows the claim. */
  edit: (tip: string) => Promise<string | null>;
  /** An edit left the agent's other changes out: they clashed with the branch's. */
  clashed: () => boolean;
  /** The agent changed its copy besides the Tags swap (or that is unknown): worth keeping. */
  edited: boolean;
}

/**
 * `done`: the tag the swap writes. `base`: the text the agent's copy was edited from (the
 * checkout's own, at its HEAD; undefined when unknown). `agent`: the agent's copy at its done
 * (null when it could not be read).
 */
export function doneText(
  swap: DoneSwap,
  done: string,
  base: string | undefined,
  agent: string | null,
): DoneText {
  // Once a try clashed it stays said: a later try may find its done already landed.
  let clash = false;
  const from = base === undefined ? null : swap(base);
  // The checkout may write the blob's LF as CRLF (core.autocrlf, eol).
  const theirs = agent === null || base?.includes('\r') ? agent : agent.replace(/\r\n/g, '\n');
  const edited = theirs !== null && theirs !== from;
  const edit = async (tip: string): Promise<string | null> => {
    const tagsOnly = swap(tip);
    if (tagsOnly === null || from === null || theirs === null || !edited) return tagsOnly;
    const merged = (await merge3(tagsOnly, from, theirs)) ?? appendedBoth(tagsOnly, from, theirs);
    // A merge that still shows the claim, or not the done (the agent edited its Tags line),
    // is not a done.
    if (merged === null || swap(merged) !== null || !showsTag(merged, done)) {
      clash = true;
      return tagsOnly;
    }
    return merged;
  };
  return { edit, clashed: () => clash, edited };
}

function showsTag(text: string, tag: string): boolean {
  return carrierTags(scanTags(text)).some((occurrence) => occurrence.tag === tag);
}

/**
 * Both sides only added text at the end of `base` (a human's line pushed below the request while
 * its agent wrote its `## Response`): the branch's addition, then the agent's. git's merge
 * calls two additions at one place a conflict, which published the done alone. Null otherwise.
 */
function appendedBoth(ours: string, base: string, theirs: string): string | null {
  if (!ours.startsWith(base) || !theirs.startsWith(base)) return null;
  const added = ours.slice(base.length);
  const joint = added === '' || added.endsWith('\n') ? '' : '\n';
  return `${ours}${joint}${theirs.slice(base.length)}`;
}

/** `git merge-file`: `base`'s changes to `theirs` applied to `ours`; null on a conflict. */
async function merge3(ours: string, base: string, theirs: string): Promise<string | null> {
  const dir = await mkdtemp(join(tmpdir(), 'engine-done-'));
  try {
    await Promise.all([
      writeFile(join(dir, 'ours'), ours),
      writeFile(join(dir, 'base'), base),
      writeFile(join(dir, 'theirs'), theirs),
    ]);
    // Exit 0: merged cleanly; above 0: that many conflicts; below: an error.
    const run = await runGit(dir, ['merge-file', '-p', '--', 'ours', 'base', 'theirs']);
    return run.code === 0 ? run.stdout : null;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
