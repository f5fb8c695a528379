/**
 * Where a status read the queue (docs/MULTI-HOST.md, "What status and the board read"): the
 * checkout of the shared branch of a daemon of git claims running on the root (whatever the
 * settings say: it may have been started with --claims git); with none and `"claims": "git"`
 * in the settings, the checkout the last one left, or with none, this working tree, which the
 * shared branch may not match. Undefined
 * in local mode with no such daemon, so that the report there is what it always was.
 */
import { join, relative } from 'node:path';
import { isBelow, queuePlaceOf, type QueuePlace } from '../daemon/queue-place.js';

export type QueueSource =
  | ({ kind: 'checkout' } & QueuePlace)
  | {
      kind: 'working-tree';
      /** The claims remote: the shared branch is on it. */
      remote: string;
    };

/** `remote`: the settings' claimsRemote with git claims, else null (load-settings hostsRemoteOf). */
export async function queueSourceOf(
  root: string,
  paths: readonly string[],
  remote: string | null,
): Promise<QueueSource | undefined> {
  const place = await queuePlaceOf(root, remote !== null);
  if (place !== null && paths.every((path) => isBelow(place.root, path)))
    return { kind: 'checkout', ...place };
  return remote === null ? undefined : { kind: 'working-tree', remote };
}

/**
 * A file of the checkout as a status shows it: at its place in the root, so that it is shown by
 * its path relative to the root, as the human's copy would be (the heading says which copy was
 * read); any other file as it is.
 */
export function queueFile(queue: QueueSource | undefined, root: string, file: string): string {
  return queue?.kind === 'checkout' && isBelow(queue.root, file)
    ? join(root, relative(queue.root, file))
    : file;
}

/** Which copy of the requests was read, in words (status and the board). */
export function queueText(queue: QueueSource): string {
  if (queue.kind === 'checkout' && queue.stopped === true)
    return `Queue: the shared branch ${queue.remote} ${queue.branch} as the checkout of the daemon that last ran on this root left it (${queue.checkout}); no daemon runs here now, so it is not fetched: its files shown by their paths in the root`;
  return queue.kind === 'checkout'
    ? `Queue: the shared branch ${queue.remote} ${queue.branch} as the daemon's checkout has it (${queue.checkout}), its files shown by their paths in the root`
    : `Queue: this working tree, not the shared branch on ${queue.remote}: no daemon of git claims runs on this root, and what the daemons did reaches this tree only by a git pull`;
}
