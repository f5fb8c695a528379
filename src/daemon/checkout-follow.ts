/**
 * The daemon's checkout of the shared branch, followed (git claims): moved to the fetched tip
 * one sync at a time, with the paths of held requests followed across renames on the branch,
 * and any other change in it (a stray write, an agent's late mark after its lease moved on)
 * reset and said, each changed copy kept first.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { messageOf } from '../errors.js';
import { keepAgentCopy, keepResetCopy } from '../claims/kept-copy.js';
import { LEASE_MOVED_ON } from '../claims/lease.js';
import { runGit } from '../process/run-git.js';
import { fetchTip, fileAt, INDEX } from '../claims/shared-branch.js';
import type { SharedCheckout } from '../claims/shared-checkout.js';
import type { LogFn } from './daemon-context.js';

/** A lease this daemon holds, by the session it was taken for. */
export interface Held {
  item: string;
  path: string;
  /** The branch's tip the path was read at: a rename since is followed from there. */
  tip: string;
  /** The agent's branch (`engine/<noun>/<slug>`), pushed with the done. */
  branch?: string;
  /**
   * The checkout moved past its copy, which its agent changed: the copy stays at this path, with
   * the index entry it was edited from, until it is let go; renames are followed at the done.
   */
  keptCopy?: boolean;
}

export class CheckoutFollow {
  /** The tip the checkout shows; null before its first sync. */
  tip: string | null = null;
  /** Why the checkout could not be moved at the last sync; null when it was. */
  fault: string | null = null;
  /**
   * Leases lost while their agents ran, by path: the copy there is kept, then reset at the next
   * sync (a late mark does not count).
   */
  private readonly lost = new Map<string, { item: string; attempt: number }>();
  private syncs: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly checkout: SharedCheckout,
    /** The leases held now: their requests may differ from the tip, and are followed. */
    private readonly held: () => Iterable<Held>,
    /**
     * Paths of this daemon's own leases it does not keep yet (taken before it started again):
     * their agents may still run and change them, until the leases are adopted.
     */
    private readonly unadopted: () => Iterable<string>,
    private readonly log: LogFn,
  ) {}

  /** A held request whose lease moved on: its agent's copy is kept, then reset, and said. */
  lose(path: string, lease: { item: string; attempt: number }): void {
    this.lost.set(path, lease);
  }

  /** A request claimed again: a mark there is its new agent's. */
  claimedAgain(path: string): void {
    this.lost.delete(path);
  }

  /**
   * Moves the checkout to the fetched tip, one sync at a time; false when unreachable.
   * `synced`: run once it moved, before any other sync starts (a claim held from then on).
   */
  sync(synced?: () => void): Promise<boolean> {
    return this.inTurn(async () => {
      const moved = await this.syncNow();
      if (moved) synced?.();
      return moved;
    });
  }

  /** One git change of the checkout at a time: a sync, or a restore of a published file. */
  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const next = this.syncs.then(work, work);
    this.syncs = next.catch(() => undefined);
    return next;
  }

  private async syncNow(): Promise<boolean> {
    try {
      const mayDiffer = new Set([...this.held()].map((held) => held.path));
      for (const path of this.unadopted()) mayDiffer.add(path);
      // Each said as its copy is kept: a reset cut short still names what it kept.
      const keep = async (paths: string[]): Promise<void> => {
        for (const path of paths) this.log('warn', await this.keepReset(path));
      };
      const synced = await this.checkout.sync(mayDiffer, keep);
      if ('unreachable' in synced) return false;
      this.tip = synced.tip;
      // A held request renamed on the branch: its agent marks it at the new path, which the
      // next sync must leave alone (it reset the agent's done there, taken for a stray write).
      // A copy the move kept stays where its agent works on it, followed from where it was.
      for (const held of this.held()) {
        if (synced.kept.includes(held.path)) held.keptCopy = true;
        if (held.keptCopy === true || held.tip === synced.tip) continue;
        held.path = await this.pathAt(held, synced.tip);
        held.tip = synced.tip;
      }
      this.fault = null;
      return true;
    } catch (error) {
      // Said once until a sync succeeds: the queue is not followed meanwhile.
      const fault = `claims: the checkout could not be moved: ${messageOf(error)}`;
      if (fault !== this.fault) this.log('warn', fault);
      this.fault = fault;
      return false;
    }
  }

  /**
   * The checkout's copy of a published file, as the branch has it (in turn with the syncs: one
   * between a sync's read of the checkout and its move would be undone), then a sync.
   */
  async restore(path: string): Promise<void> {
    await this.inTurn(() =>
      this.checkout
        .restore([path])
        .catch((error: unknown) =>
          this.log('warn', `claims: ${path} not restored: ${messageOf(error)}`),
        ),
    );
    await this.sync();
  }

  /** Waits for the sync under way, if any. */
  async settled(): Promise<void> {
    await this.syncs.catch(() => undefined);
  }

  /** The path of a held item on the branch's tip as fetched now, following a rename since. */
  async pathNow(at: Held): Promise<string> {
    const tip = await fetchTip(this.checkout.where);
    if (tip === null || tip === at.tip) return at.path;
    return this.pathAt(at, tip);
  }

  /** The path of a held item at `tip`, following its renames since the tip it was read at. */
  private async pathAt(at: Held, tip: string): Promise<string> {
    // Commit by commit: the claim's own edit of a small file would hide a rename over the whole.
    const args = [
      'log',
      '--reverse',
      '--format=',
      '--name-status',
      '-z',
      '-M',
      `${at.tip}..${tip}`,
    ];
    const log = await runGit(this.checkout.where.repo, args);
    // Each change: its status, then its path, or (a rename or copy) its old and new paths.
    const fields = log.stdout.split('\0').map((field) => field.replace(/^\n+/, ''));
    let path = at.path;
    for (let i = 0; i + 2 < fields.length; i++)
      if (fields[i]!.startsWith('R') && fields[i + 1] === path) path = fields[i + 2]!;
    return path;
  }

  /** What a reset of a changed copy says, the copy kept first (a file gone has none). */
  private async keepReset(path: string): Promise<string> {
    const lease = this.lost.get(path);
    this.lost.delete(path);
    const text = await readFile(join(this.checkout.dir, path), 'utf8').catch(() => null);
    const indexed = await fileAt(this.checkout.dir, INDEX, path).catch(() => 'gone');
    // Only the index differs from HEAD (a move cut short): no one's write to keep.
    if (text !== null && typeof indexed !== 'string' && indexed.text === text)
      return `claims: ${path} differed from the checkout's tip only in its index (a move cut short): reset`;
    const kept =
      text === null
        ? 'it has no copy to keep'
        : lease === undefined
          ? await keepResetCopy(this.checkout.dir, { path, text, at: new Date() })
          : await keepAgentCopy(this.checkout.dir, { ...lease, text });
    if (lease === undefined)
      return `claims: ${path} was changed or deleted in the checkout with no lease held: ${kept}, and the checkout's copy is reset`;
    return `claims: ${path} was changed by its agent after this host's lease of it ${LEASE_MOVED_ON}: not counted; ${kept}, and the checkout's copy is restored`;
  }
}
