/**
 * Where the daemon's claims are kept: the one seam its launch, claim check and done recording
 * write claims through. The local store is the request file itself (the compare-and-swap of its
 * text, as engine always did); the git store (git-claims.ts) first takes the item's claim ref on
 * the shared remote, then writes the request on the shared branch (docs/MULTI-HOST.md).
 */
import { editFile } from '../files/tag-file.js';
import type { TextEdit } from '../files/update-request-file.js';
import { messageOf, PreconditionError } from '../errors.js';
import { claimEdit } from '../tags/lifecycle-edits.js';
import type { PlannedItem } from './request-snapshot.js';

/**
 * - `claimed`: the file now carries the claim (or, git, will with the next sync).
 * - `changed`: the file is not the text the item was read from (`since-read`), or is no longer
 *   approved (`not-delegated`): it is read again.
 * - `elsewhere`: another host holds the item (git only); `host` names it.
 * - `failed`: not written (the item stays approved; `message` says why); `retryAt`: tried again
 *   then (the remote could not be reached), else when its file changes.
 */
export type ClaimWrite =
  | { kind: 'claimed' }
  | { kind: 'changed'; why: 'since-read' | 'not-delegated' }
  | { kind: 'elsewhere'; host: string }
  | { kind: 'failed'; message: string; retryAt?: number };

/** Whether a session's `#done-X` counts (git: published with its lease's end), and why not. */
export type DoneWrite = { counted: true } | { counted: false; why: string };

/**
 * Who a claim in a request file belongs to, beside its session's own record:
 * - `here`: judged as always, by its session's processes on this host.
 * - `elsewhere`: another host holds its lease (git); `host` names it.
 * - `taken-over`: its lease ran out unrenewed and this daemon took it over (git): it is judged
 *   here now, and without a session record here it is requeued, `reason` saying why.
 * - `unknown`: cannot be told now (the remote could not be reached): looked at again later.
 */
export type HolderVerdict =
  | { kind: 'here' }
  | { kind: 'elsewhere'; host: string }
  | { kind: 'taken-over'; reason: string }
  | { kind: 'unknown'; reason: string };

/** A finished item, as its session names it. */
export interface DoneItem {
  file: string;
  noun: string;
  session: string;
}

export interface ClaimStore {
  /**
   * Whether claims are written in the request file the daemon reads (an older copy saved over
   * a live claim is then restored in place), or elsewhere first (git: the remote).
   */
  readonly inPlace: boolean;
  /**
   * Where every agent runs in a worktree of its own (worktree.ts), made from that directory's
   * HEAD (git: the checkout of the shared branch, so never the human's tree); null: the
   * daemon's root, and only with --worktree.
   */
  readonly agentRoot: string | null;
  /** The claim: `#delegated-X` → `#claimed-X` + Session line, only over the text it was read from. */
  claim(item: PlannedItem, session: string): Promise<ClaimWrite>;
  /** The requeue's one write: `edit` over the file's text; PreconditionError when it is refused. */
  requeue(file: string, noun: string, edit: TextEdit): Promise<void>;
  /** A session's `#done-X`, seen in its file: whether it counts (git: published, or fenced). */
  publishDone(item: DoneItem): Promise<DoneWrite>;
  /** Who the claim of `session` in `file` belongs to (claim-check.ts judges the rest). */
  judgeHolder(file: string, noun: string, session: string): Promise<HolderVerdict>;
  /**
   * The daemon follows `session` no more, and does not stop: what this store still keeps for
   * it is let go (git: its lease given back).
   */
  followEnded?(session: string): Promise<void>;
  /**
   * Why a session this daemon does not follow can no longer count: its item is another lease's
   * now (git: another host took it over, or finished it, while no daemon here followed it). Null
   * while it still may (its lease is this daemon's to adopt, or lapsed, or cannot be read now).
   */
  movedOn?(item: DoneItem): Promise<string | null>;
  /** The daemon stops: writes still being tried (git: a done's publication) give up. */
  stopping?(): void;
}

/** The file is no longer the text the item was read from. */
class ChangedSinceRead extends Error {}

/** The request file is the store: each write one compare-and-swap of its text. */
export const localClaimStore: ClaimStore = {
  inPlace: true,
  agentRoot: null,
  async claim(item, session) {
    try {
      await editFile(item.file, (text) => {
        if (text !== item.snapshot.text) throw new ChangedSinceRead();
        return claimEdit(text, item.noun, session);
      });
    } catch (error) {
      if (error instanceof ChangedSinceRead) return { kind: 'changed', why: 'since-read' };
      if (error instanceof PreconditionError) return { kind: 'changed', why: 'not-delegated' };
      return { kind: 'failed', message: messageOf(error) };
    }
    return { kind: 'claimed' };
  },
  async requeue(file, _noun, edit) {
    await editFile(file, edit);
  },
  publishDone: () => Promise.resolve({ counted: true }),
  judgeHolder: () => Promise.resolve({ kind: 'here' }),
};

/** The daemon's claim store: the local one unless the context gives another. */
export function claimStoreOf(ctx: { claims?: ClaimStore }): ClaimStore {
  return ctx.claims ?? localClaimStore;
}

/**
 * The root the queue is read under, where `Depends On` entries are resolved: with git claims the
 * root's counterpart in the checkout of the shared branch (the truth every host shares), else
 * the root.
 */
export function queueRootOf(ctx: { claims?: ClaimStore; options: { root: string } }): string {
  const store = claimStoreOf(ctx);
  return store.inPlace ? ctx.options.root : (store.agentRoot ?? ctx.options.root);
}
