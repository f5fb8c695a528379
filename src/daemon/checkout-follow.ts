/**
 * The daemon's checkout of the shared branch, followed (git claims): moved to the fetched tip
 * one sync at a time, with the paths of held requests followed across renames on the branch,
 * and any other change in it (a stray write, an agent's late mark after its lease moved on)
 * reset and said.
 */
import { messageOf } from '../errors.js';
import { runGit } from '../process/run-git.js';
import { fetchTip } from '../claims/shared-branch.js';
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
}

export class CheckoutFollow {
  /** The tip the checkout shows; null before its first sync. */
  tip: string | null = null;
  /** Why the checkout could not be moved at the last sync; null when it was. */
  fault: string | null = null;
  /** Paths of leases lost while their agents ran: a late mark there is reset, not counted. */
  private readonly lost = new Set<string>();
  private syncs: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly checkout: SharedCheckout,
    /** The leases held now: their requests may differ from the tip, and are followed. */
    private readonly held: () => Iterable<Held>,
    private readonly log: LogFn,
  ) {}

  /** A held request whose lease moved on: its agent's mark there is reset and said. */
  lose(path: string): void {
    this.lost.add(path);
  }

  /** A request claimed again: a mark there is its new agent's. */
  claimedAgain(path: string): void {
    this.lost.delete(path);
  }

  /** Moves the checkout to the fetched tip, one sync at a time; false when unreachable. */
  sync(): Promise<boolean> {
    const run = async (): Promise<boolean> => {
      try {
        const mayDiffer = new Set([...this.held()].map((held) => held.path));
        const synced = await this.checkout.sync(mayDiffer);
        for (const path of synced.reset) this.log('warn', this.resetText(path));
        if ('unreachable' in synced) return false;
        this.tip = synced.tip;
        // A held request renamed on the branch: its agent marks it at the new path, which the
        // next sync must leave alone (it reset the agent's done there, taken for a stray write).
        for (const held of this.held())
          if (held.tip !== synced.tip) {
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
    };
    const next = this.syncs.then(run, run);
    this.syncs = next.catch(() => undefined);
    return next;
  }

  /** The checkout's copy of a published file, as the branch has it: the next sync moves it. */
  async restore(path: string): Promise<void> {
    await this.checkout
      .restore([path])
      .catch((error: unknown) =>
        this.log('warn', `claims: ${path} not restored: ${messageOf(error)}`),
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

  private resetText(path: string): string {
    if (this.lost.delete(path))
      return `${path} was marked after this host's lease of it moved on to another host: not counted; the checkout's copy is restored`;
    return `claims: ${path} was written in the checkout with no lease held: reset`;
  }
}
