/**
 * The git claim store (`--claims git`, docs/MULTI-HOST.md): daemons on several hosts share one
 * queue through the git remote. The daemon reads the requests from its SharedCheckout of the
 * shared branch (synced every --claims-fetch-ms, jittered), never from the human's tree; a claim
 * is first its item's claim ref (GitClaimStore: a compare-and-swap on the remote), then a fenced
 * edit of the request on the shared branch; each lease held is renewed by a LeaseKeeper while its
 * session is open; a done is published with the lease's end, in one atomic push.
 */
import { readFile, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { followRemoteBranch } from '../claims/agent-branch.js';
import { doneText, type DoneText } from '../claims/done-text.js';
import { PUSH_FLAGS, pushUrl } from '../claims/claim-refs.js';
import { stampFetch } from '../claims/claims-view.js';
import { GitClaimStore, type HeldLease, type JudgedClaim } from '../claims/git-claim-store.js';
import { itemIdOf } from '../claims/item-id.js';
import { LEASE_MOVED_ON, sameHolder } from '../claims/lease.js';
import { LeaseKeeper } from '../claims/lease-keeper.js';
import { fileAt, INDEX, type BranchEditOutcome, type Fence } from '../claims/shared-branch.js';
import { keepAgentCopy } from '../claims/kept-copy.js';
import { SharedCheckout } from '../claims/shared-checkout.js';
import { EngineError, messageOf, PreconditionError } from '../errors.js';
import type { TextEdit as FileEdit } from '../files/update-request-file.js';
import type { ProcProbe } from '../process/proc-probe.js';
import { networkOptions, oneLine, runGit } from '../process/run-git.js';
import { swapTags } from '../tags/edit-tags.js';
import { claimEdit } from '../tags/lifecycle-edits.js';
import { transitionTags } from '../tags/tag-name.js';
import { worktreePlace } from '../worktrees/worktree.js';
import type { ClaimStore, ClaimWrite, DoneItem, DoneWrite, HolderVerdict } from './claim-store.js';
import type { DaemonOptions, LogFn } from './daemon-context.js';
import { acquireCheckoutLock } from './daemon-lock.js';
import { findSharedBranch, instanceOf, untilReached, type GitPlace } from './git-place.js';
import { recordQueuePlace } from './queue-place.js';
import { CheckoutFollow, type Held } from './checkout-follow.js';
import type { PlannedItem } from './request-snapshot.js';

export class GitClaims implements ClaimStore {
  readonly inPlace = false;
  readonly agentRoot: string;
  private readonly store: GitClaimStore;
  private readonly keeper: LeaseKeeper;
  private readonly held = new Map<string, Held>();
  /** Sessions whose done is being published, by how many tries of it run (follower, reaper). */
  private readonly publishing = new Map<string, number>();
  /** The claims as last fetched, by item id; null: the last fetch could not reach the remote. */
  private seen: Map<string, JudgedClaim> | null = null;
  /** One write of the shared branch at a time: this daemon's writes never race each other. */
  private branchWrites: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  /** The scheduled fetch under way, if any. */
  private ticking: Promise<void> = Promise.resolve();
  private closed = false;
  /** The daemon stops: a done still being tried gives up at its next try. */
  private stopped = false;
  private reachable = true;
  private readonly follow: CheckoutFollow;

  private constructor(
    private readonly place: GitPlace,
    private readonly options: DaemonOptions,
    private readonly log: LogFn,
  ) {
    const { repo, remote, branch, me } = place;
    this.agentRoot = place.agentRoot;
    this.follow = new CheckoutFollow(
      place.checkout,
      () => this.held.values(),
      () => this.unadopted(),
      log,
    );
    this.store = new GitClaimStore({ repo, remote, branch, me, leaseMs: options.claimsLeaseMs });
    this.keeper = new LeaseKeeper(this.store, {
      renewEveryMs: options.claimsLeaseMs / 3,
      onLost: (item, attempt) => {
        log('warn', `the lease of ${item} ${LEASE_MOVED_ON}: its session's done will not count`);
        for (const [session, held] of this.held)
          if (held.item === item) {
            this.held.delete(session);
            this.follow.lose(held.path, { item, attempt });
          }
      },
      onUnreachable: (item, message) =>
        log('warn', `could not renew the lease of ${item}: ${message}; trying again`),
      onRenewedAgain: (item) => log('info', `the lease of ${item} is renewed again`),
    });
  }

  /**
   * The store of a daemon over `options.root`: the shared branch found, the checkout made (a
   * remote out of reach is logged and tried again until it answers). The daemon's watched paths
   * are then the same paths inside the checkout (`paths()`).
   */
  static async open(options: DaemonOptions, log: LogFn, probe: ProcProbe): Promise<GitClaims> {
    const { repo, remote, branch, dir } = await findSharedBranch(options, log);
    // Before the checkout or its instance id is touched: a second daemon of this repository is
    // refused, naming the first one's root.
    const lock = await acquireCheckoutLock(dir, options.root);
    try {
      const boot = probe.bootId();
      const me = { host: probe.hostname(), instance: await instanceOf(dir, boot), boot };
      const checkout = new SharedCheckout({ repo, remote, branch }, dir);
      const agentRoot = join(dir, relative(repo, await realpath(options.root)));
      const place = { repo, remote, branch, me, checkout, agentRoot, lock };
      const claims = new GitClaims(place, options, log);
      await untilReached(options, log, async () => ((await claims.tick()) ? true : null));
      log('info', `claims: git, on ${remote} ${branch}; the queue is read from ${dir}`);
      await recordQueuePlace(options.root, { checkout: dir, root: agentRoot, remote, branch });
      claims.schedule();
      return claims;
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  /** The daemon's watched paths, inside the checkout: the same places in the shared tree. */
  async paths(): Promise<string[]> {
    const root = await realpath(this.options.root);
    return this.options.paths.map((path) => {
      const inRepo = relative(this.place.repo, join(root, relative(this.options.root, path)));
      if (inRepo.startsWith('..') || isAbsolute(inRepo))
        throw new EngineError(`${path} is outside the git repository ${this.place.repo}`);
      return join(this.place.checkout.dir, inRepo);
    });
  }

  stopping(): void {
    this.stopped = true;
  }

  /** Stops fetching and renewing: the leases held run out unless a new daemon takes them over. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    // A fetch under way finishes first: its stamp and sync write nothing after the close.
    await this.ticking;
    await this.keeper.stop();
    await this.follow.settled();
    await this.place.lock.release();
  }

  async claim(item: PlannedItem, session: string): Promise<ClaimWrite> {
    const at = await this.itemAt(item.file);
    if ('failed' in at) return { kind: 'failed', message: at.failed };
    const { branch } = worktreePlace(this.agentRoot, item.noun, item.file);
    let won = await this.store.claim(at.item, at.path, item.noun, branch);
    if (!won.won && won.outcome.kind === 'lost') {
      const judged = await this.judged(at.item);
      if (judged === null) return this.unreachable('the remote could not be reached');
      const orphan = judged.judgement === 'mine' && !this.keeper.current(at.item);
      if (!orphan && judged.judgement !== 'expired' && judged.judgement !== 'free')
        return { kind: 'elsewhere', host: holderOf(judged) };
      won = await this.store.takeOver(judged, { file: at.path, noun: item.noun, branch });
      if (!won.won && won.outcome.kind === 'lost')
        return { kind: 'elsewhere', host: 'another host' };
    }
    if (!won.won) {
      const { outcome } = won;
      if (outcome.kind === 'unreachable') return this.unreachable(outcome.message);
      return { kind: 'failed', message: 'message' in outcome ? outcome.message : outcome.kind };
    }
    return this.writeClaim(item, session, at, won.lease);
  }

  /**
   * The claim's fenced edit of the request on the shared branch, once its ref is won, over the
   * text the item was read from only. The lease is kept from the moment it is won: the edit may
   * wait its turn behind this daemon's other branch writes for longer than a lease.
   */
  private async writeClaim(
    item: PlannedItem,
    session: string,
    at: Held,
    lease: HeldLease,
  ): Promise<ClaimWrite> {
    let sinceRead = false;
    const claimText = orNull((text) => claimEdit(text, item.noun, session));
    // Line ends aside: the checkout may write a blob's LF as CRLF (core.autocrlf, eol).
    const read = lf(item.snapshot.text);
    const edit = (text: string): string | null => {
      sinceRead = lf(text) !== read;
      return sinceRead ? null : claimText(text);
    };
    const message = `engine: claim ${at.path} (#claimed-${item.noun}, attempt ${lease.record.attempt})`;
    this.keeper.hold(lease);
    const outcome = await this.branchTurn(() =>
      this.keeper.use(at.item, async (held) => {
        const written = await this.store.writeFenced(held, at.path, edit, message);
        return { lease: written.lease, value: written.outcome };
      }),
    ).catch(async (error: unknown) => {
      // git failed here (a full disk): the lease must not be kept with no session behind it.
      await this.giveBack(at.item);
      throw error;
    });
    if (outcome?.kind !== 'pushed') {
      // Not written: the ref is given back, so that no host waits a lease for it.
      await this.giveBack(at.item);
      if (outcome === undefined) return { kind: 'elsewhere', host: 'another host' };
      if (outcome.kind === 'not-applicable' && sinceRead) {
        // Read again only once the checkout shows the new text, else it is claimed over again.
        if (!(await this.follow.sync())) return this.unreachable('the checkout could not be moved');
        return { kind: 'changed', why: 'since-read' };
      }
      if (outcome.kind === 'not-applicable' || outcome.kind === 'gone')
        return { kind: 'changed', why: 'not-delegated' };
      if (outcome.kind === 'unreachable') return this.unreachable(outcome.message);
      return { kind: 'failed', message: outcomeText(outcome) };
    }
    const { branch } = worktreePlace(this.agentRoot, item.noun, item.file);
    // A re-approved item continues the branch its earlier run left on the remote.
    const left = await followRemoteBranch(this.place, branch).catch(messageOf);
    if (left !== null) this.log('warn', `claims: ${at.path}: ${left}`);
    // Held only once the checkout shows the claim (a held copy is left as it is by a move path
    // by path, past another agent's changed copy the tip changed too, which left this one
    // approved), and before any other sync starts (one under way would reset its agent's write).
    const hold = () => {
      this.held.set(session, { ...at, branch });
      this.follow.claimedAgain(at.path);
    };
    if (!(await this.showClaim(hold))) hold();
    return { kind: 'claimed' };
  }

  /**
   * The checkout moved to show the claim before its agent starts there and the session is
   * followed there: an agent started on the approved copy could not mark it done, and its
   * follower ended at once (seen in the daemons' race: the item stalled, its lease renewed for
   * good). A sync cut short (a fetch or git's worktree list lost to load) is tried again, for a
   * third of a lease. `hold` runs in the turn of the sync that moved it; false when none did.
   */
  private async showClaim(hold: () => void): Promise<boolean> {
    const until = Date.now() + this.options.claimsLeaseMs / 3;
    for (;;) {
      if (await this.follow.sync(hold)) return true;
      if (Date.now() >= until || this.closed) return false;
      await new Promise((resolve) => setTimeout(resolve, SYNC_AGAIN_MS));
    }
  }

  /** A lease won but not used: ended as `released` (when it still can be) and no longer kept. */
  private async giveBack(item: string): Promise<void> {
    try {
      await this.keeper.use(item, async (held) => {
        const ended = await this.store.end(held, 'released');
        return { lease: ended.won ? ended.lease : null, value: null };
      });
    } finally {
      await this.keeper.drop(item);
    }
  }

  /** A claim that could not reach the remote: said, and tried again after a fetch period. */
  private unreachable(message: string): ClaimWrite {
    const retryAt = Date.now() + this.options.claimsFetchMs;
    return { kind: 'failed', message: `${message}; trying again`, retryAt };
  }

  async requeue(file: string, noun: string, edit: FileEdit): Promise<void> {
    const at = await this.itemAt(file);
    if ('failed' in at) throw new EngineError(at.failed);
    // The checkout's copy is where the agent marks done: a requeue judged from a read before
    // that mark is refused here, as the local store's compare-and-swap refuses it.
    const local = await readFile(file, 'utf8').catch(() => null);
    if (local === null || orNull(edit)(local) === null)
      throw new PreconditionError(`${file} no longer shows the claim it was judged by`);
    const message = `engine: requeue ${at.path} (#claimed-${noun})`;
    const outcome = await this.branchTurn(() =>
      this.keeper.use(at.item, async (lease) => {
        const written = await this.store.writeFenced(lease, at.path, orNull(edit), message);
        return { lease: written.lease, value: written.outcome };
      }),
    );
    if (outcome === undefined)
      throw new PreconditionError(`this daemon holds no lease of ${at.path}`);
    if (outcome.kind === 'not-applicable' || outcome.kind === 'fenced' || outcome.kind === 'gone')
      throw new PreconditionError(`${at.path} on the shared branch: ${outcome.kind}`);
    if (outcome.kind !== 'pushed' && outcome.kind !== 'unchanged')
      throw new EngineError(outcomeText(outcome));
    // Given back: the next claim, by any host, takes the free ref over.
    await this.keeper.use(at.item, async (lease) => {
      const ended = await this.store.end(lease, 'released');
      return { lease: ended.won ? ended.lease : null, value: null };
    });
    await this.keeper.drop(at.item);
    for (const [session, held] of this.held) if (held.item === at.item) this.held.delete(session);
    // An agent's late mark in the checkout's copy does not count: the branch's text is moved in.
    await this.follow.restore(at.path);
  }

  async publishDone(item: DoneItem): Promise<DoneWrite> {
    const { session } = item;
    this.publishing.set(session, (this.publishing.get(session) ?? 0) + 1);
    try {
      return await this.publishNow(item);
    } finally {
      const left = (this.publishing.get(session) ?? 1) - 1;
      if (left === 0) this.publishing.delete(session);
      else this.publishing.set(session, left);
    }
  }

  /**
   * The daemon follows `session` no more, its claim ended as the files say and not through this
   * store (a human took the tag back; an agent that ended without its done, while the checkout
   * did not show its claim): a lease still kept for it is given back, its copy kept and reset at
   * the next sync. Kept, it would be renewed for good, the item shown claimed on the branch and
   * never claimed again by any host. Never while its done is being published, or the daemon stops.
   */
  async followEnded(session: string): Promise<void> {
    const at = this.held.get(session);
    if (!at || this.publishing.has(session) || this.stopped || this.closed) return;
    const lease = this.keeper.current(at.item);
    this.held.delete(session);
    if (!lease) return;
    this.follow.lose(at.path, { item: at.item, attempt: lease.record.attempt });
    this.log(
      'warn',
      `claims: ${at.path}: ${session} is followed no more, its claim ended here: its lease is given back`,
    );
    await this.giveBack(at.item);
  }

  private async publishNow(item: DoneItem): Promise<DoneWrite> {
    const at =
      this.held.get(item.session) ?? (await this.adopt(item.file, item.noun, item.session));
    if (!at) return { counted: false, why: `this daemon holds no lease of ${item.session}` };
    const { to } = transitionTags('finish', item.noun);
    const { done, copy } = await this.doneTextOf(at, item.noun);
    const also = await this.agentBranch(at);
    const mine = this.keeper.current(at.item);
    // Tried for a lease; races lost to other pushes go on while the lease is kept alive (renewed:
    // the remote answers and the lease is this host's), up to PUBLISH_LEASES leases in all (the
    // daemon's pipeline waits meanwhile); then given up, and another host takes the item over.
    // A push the server keeps refusing (a hook) is given up after a lease of refusals.
    const leaseMs = this.options.claimsLeaseMs;
    const last = Date.now() + PUBLISH_LEASES * leaseMs;
    let until = Date.now() + leaseMs;
    let refusedSince: number | null = null;
    for (;;) {
      // Where the item is now: a human may have renamed its file on the branch meanwhile.
      const path = await this.follow.pathNow(at);
      const message = `engine: done ${path} (${to})`;
      const written =
        (await this.branchTurn(() =>
          this.keeper.use(at.item, async (lease) => {
            const fenced = await this.store.writeFenced(
              lease,
              path,
              done.edit,
              message,
              'done',
              also,
            );
            return { lease: fenced.lease, value: fenced };
          }),
        )) ?? (await this.doneUnheard(mine));
      const outcome = written?.outcome;
      const ended = doneOf(written);
      if (ended !== null) {
        const kept = await this.keepCopy(at, { done, copy, mine }, ended);
        await this.release(at, item.session);
        if (ended.counted || !isFenced(outcome)) return ended;
        const late = await this.keepLate(at.item, also);
        return { counted: false, why: [ended.why, kept, late].filter((t) => t !== '').join('; ') };
      }
      this.log(
        'warn',
        `could not publish the done of ${at.path}: ${outcomeText(outcome!)}; trying again`,
      );
      const renewedAt = this.keeper.current(at.item)?.record.renewedAt;
      if (outcome?.kind === 'unreachable' && outcome.raced && renewedAt !== undefined)
        until = Math.min(last, Math.max(until, renewedAt + leaseMs));
      refusedSince = outcome?.kind === 'refused' ? (refusedSince ?? Date.now()) : null;
      const refused = refusedSince !== null && Date.now() - refusedSince > leaseMs;
      if (this.closed || this.stopped || Date.now() > until || refused) {
        // Given up: the lease runs out, and another host takes the item over.
        const why = 'it could not be published while its lease was kept';
        const kept = await this.keepCopy(at, { done, copy, mine }, { counted: false, why });
        await this.release(at, item.session);
        return { counted: false, why: [why, kept].filter((t) => t !== '').join('; ') };
      }
      await new Promise((resolve) => setTimeout(resolve, this.options.claimsFetchMs));
    }
  }

  async judgeHolder(file: string, noun: string, session: string): Promise<HolderVerdict> {
    if (this.held.has(session)) return { kind: 'here' };
    const at = await this.itemAt(file);
    if ('failed' in at) return { kind: 'unknown', reason: at.failed };
    if (this.seen === null) return { kind: 'unknown', reason: 'the remote could not be reached' };
    const judged = this.seen.get(at.item);
    // No claim ref: a claim made by hand, or by a daemon of local claims: judged as today.
    if (!judged) return { kind: 'here' };
    if (judged.judgement === 'mine') {
      if (this.keeper.current(at.item) || (await this.adopt(file, noun, session)))
        return { kind: 'here' };
      return { kind: 'elsewhere', host: 'another host' };
    }
    if (judged.judgement === 'held' || judged.judgement === 'done')
      return { kind: 'elsewhere', host: holderOf(judged) };
    const taken = await this.store.takeOver(judged);
    if (!taken.won) return { kind: 'elsewhere', host: 'another host' };
    this.held.set(session, at);
    this.keeper.hold(taken.lease);
    const was = judged.record;
    const how = was?.state === 'released' ? 'was given back' : 'ran out unrenewed';
    return {
      kind: 'taken-over',
      reason: `the lease of ${was ? was.holder.host : 'its holder'} ${how} (attempt ${was?.attempt ?? 0}); taken over as attempt ${taken.lease.record.attempt}`,
    };
  }

  async movedOn({ file, noun, session }: DoneItem): Promise<string | null> {
    if (this.held.has(session) || this.seen === null) return null;
    const at = await this.itemAt(file);
    if ('failed' in at) return null;
    const judged = this.seen.get(at.item);
    const record = judged?.record;
    if (!record || record.noun !== noun) return null;
    if (judged.judgement !== 'held' && judged.judgement !== 'done') return null;
    // A done of this daemon's identity is its own session's, counted already.
    if (judged.judgement === 'done' && sameHolder(record.holder, this.place.me)) return null;
    const what = judged.judgement === 'done' ? 'finished by' : 'held by';
    return `its item's lease is ${what} ${record.holder.host} as attempt ${record.attempt}`;
  }

  /**
   * A lease of this daemon's own identity it does not keep (its earlier start on this boot, or
   * a release that failed): taken over by compare-and-swap (attempt + 1) and kept for
   * `session`, whose processes the claim check judges as always. Undefined when not won.
   */
  private async adopt(file: string, noun: string, session: string): Promise<Held | undefined> {
    const found = await this.itemAt(file);
    if ('failed' in found) return undefined;
    // The agent's branch goes with its done, as for a claim of this start.
    const at = { ...found, branch: worktreePlace(this.agentRoot, noun, file).branch };
    const judged = this.seen?.get(at.item);
    if (judged?.judgement !== 'mine' || this.keeper.current(at.item)) return undefined;
    const taken = await this.store.takeOver(judged, { file: at.path, noun, branch: at.branch });
    if (!taken.won) return undefined;
    this.log(
      'info',
      `claims: ${at.path}: this daemon's earlier lease adopted as attempt ${taken.lease.record.attempt}`,
    );
    this.held.set(session, at);
    this.keeper.hold(taken.lease);
    return at;
  }

  /**
   * The done's text: the agent's copy (its Response with it) merged onto the branch's, from
   * the checkout's own text of the file in its index (what the copy was edited from: a move past
   * a copy its agent changed leaves the index entry as it was).
   */
  private async doneTextOf(
    at: Held,
    noun: string,
  ): Promise<{ done: DoneText; copy: string | null }> {
    const { from, to } = transitionTags('finish', noun);
    const copy = await readFile(join(this.place.checkout.dir, at.path), 'utf8').catch(() => null);
    if (copy === null)
      this.log(
        'warn',
        `claims: ${at.path}: the agent's copy could not be read: only its done is published`,
      );
    // The index's text: the tip's, unless a move kept the agent's copy over the tip's change.
    const edited = await fileAt(this.place.checkout.dir, INDEX, at.path).catch(() => 'gone');
    const base = typeof edited === 'string' ? undefined : edited.text;
    const swap = orNull((text) => swapTags(text, [from], to));
    return { done: doneText(swap, to, base, copy), copy };
  }

  /**
   * The lease was ended while the done was tried: by this done itself, landed with its answer
   * lost (a renewal found the ref ended), which counts; else nothing to say (undefined).
   */
  private async doneUnheard(
    mine: HeldLease | undefined,
  ): Promise<{ outcome: BranchEditOutcome; lease: HeldLease } | undefined> {
    const ended = mine && (await this.store.doneOfMine(mine).catch(() => null));
    return ended ? { outcome: { kind: 'unchanged' }, lease: ended } : undefined;
  }

  /**
   * Keeps the agent's copy of its request when its edits were not published (they clashed with
   * the branch's, or its done did not count): beside the checkout, as text (none of its tags
   * reads as the queue's), named in the log. Says where, or nothing when there was none to keep.
   */
  private async keepCopy(
    at: Held,
    { done, copy, mine }: { done: DoneText; copy: string | null; mine: HeldLease | undefined },
    ended: DoneWrite,
  ): Promise<string> {
    if (copy === null || !done.edited || (ended.counted && !done.clashed())) return '';
    const attempt = mine?.record.attempt ?? 0;
    const where = await keepAgentCopy(this.place.checkout.dir, {
      item: at.item,
      attempt,
      text: copy,
    });
    const what = ended.counted
      ? "the agent's edits clashed with the shared branch's since its claim: only its done was published"
      : `its done did not count (${ended.why})`;
    this.log('warn', `claims: ${at.path}: ${what}; ${where}`);
    return where;
  }

  /** The done's lease let go: the checkout's copy restored while still held (a sync meanwhile
   * must not take the mark for a stray write), then no longer kept. */
  private async release(at: Held, session: string): Promise<void> {
    await this.follow.restore(at.path);
    this.held.delete(session);
    await this.keeper.drop(at.item);
  }

  /** The agent's branch as this clone has it: pushed with the done, in the same atomic push. */
  private async agentBranch(at: Held): Promise<Fence['also']> {
    if (at.branch === undefined) return [];
    const ref = `refs/heads/${at.branch}`;
    const run = await runGit(this.place.repo, [
      'rev-parse',
      '--verify',
      '--quiet',
      `${ref}^{commit}`,
    ]);
    return run.code === 0 ? [{ ref, commit: run.stdout.trim() }] : [];
  }

  /**
   * A fenced done's branch, recorded under a name no one counts (`refs/engine/late/<item>/<this
   * daemon's instance>`), so that its work is not lost; says where, or why not.
   */
  private async keepLate(item: string, also: Fence['also']): Promise<string> {
    const [agent] = also ?? [];
    if (agent === undefined) return 'it had no branch to keep';
    const ref = `refs/engine/late/${item}/${this.place.me.instance}`;
    const url = await pushUrl(this.place);
    const run =
      url === null
        ? null
        : await runGit(
            this.place.repo,
            ['push', ...PUSH_FLAGS, `--force-with-lease=${ref}:`, url, `${agent.commit}:${ref}`],
            networkOptions(),
          );
    return run?.code === 0
      ? `its branch is kept on the remote as ${ref}`
      : `its branch could not be kept on the remote: ${run ? oneLine(run.stderr) : 'no push URL'}`;
  }

  /**
   * One write of the shared branch at a time. Its turn is waited for before the lease's own
   * turn (keeper.use): a write queued behind others never holds up its lease's renewals (which
   * under load let leases run out while their dones waited, seen with 3 hosts and 60 items).
   */
  private branchTurn<T>(write: () => Promise<T>): Promise<T> {
    const next = this.branchWrites.then(write, write);
    this.branchWrites = next.catch(() => undefined);
    return next;
  }

  /**
   * One fetch of the claims and the branch; false when the remote could not be reached. The
   * claims first: the checkout's move must know this daemon's own leases from before it started
   * again, whose agents' copies are theirs, not stray writes; without them it is not moved.
   */
  private async tick(): Promise<boolean> {
    const claims = await this.store.refresh();
    this.seen = claims && new Map(claims.map((claim) => [claim.item, claim]));
    const synced = claims !== null && (await this.follow.sync());
    // Dated for `engine status` and the board, as `engine claims list` dates its own fetch.
    if (claims !== null)
      await stampFetch(this.place, new Date()).catch((error: unknown) =>
        this.log('warn', `claims: the fetch's time not recorded: ${messageOf(error)}`),
      );
    // A checkout that could not be moved is said by sync itself, never blamed on the remote.
    const reached = claims !== null && (synced || this.follow.fault !== null);
    if (reached !== this.reachable)
      this.log(
        reached ? 'info' : 'warn',
        reached
          ? `claims: ${this.place.remote} answers again`
          : `claims: ${this.place.remote} cannot be reached; trying again (no claim is made meanwhile)`,
      );
    this.reachable = reached;
    return synced;
  }

  private schedule(): void {
    if (this.closed) return;
    const wait = this.options.claimsFetchMs * (0.8 + 0.4 * Math.random());
    this.timer = setTimeout(() => {
      this.ticking = this.tick()
        .then(() => undefined)
        .catch((error: unknown) => this.log('error', `claims: ${messageOf(error)}`))
        .finally(() => this.schedule());
    }, wait);
  }

  /** Paths of this daemon's own leases, as last fetched, that it does not keep (yet). */
  private unadopted(): string[] {
    const mine = [...(this.seen?.values() ?? [])].filter(
      (claim) => claim.judgement === 'mine' && !this.keeper.current(claim.item),
    );
    return mine.flatMap((claim) => (claim.record ? [claim.record.file] : []));
  }

  /** The item id and path on the shared branch of a request file in the checkout. */
  private async itemAt(file: string): Promise<Held | { failed: string }> {
    const top = await realpath(this.place.checkout.dir);
    const path = relative(top, file);
    const tip = this.follow.tip;
    if (path.startsWith('..') || isAbsolute(path) || tip === null)
      return { failed: `${file} is not in the checkout of the shared branch` };
    const item = await itemIdOf(top, tip, path.split(sep).join('/'));
    if (item === null) return { failed: `${path} has no history on ${this.place.branch}` };
    return { item, path: path.split(sep).join('/'), tip };
  }

  /** The claim as the remote holds it now (refreshed); null when unreachable. */
  private async judged(item: string): Promise<JudgedClaim | null> {
    const claims = await this.store.refresh();
    if (claims === null) return null;
    this.seen = new Map(claims.map((claim) => [claim.item, claim]));
    return this.seen.get(item) ?? null;
  }
}

/** How soon a sync cut short after a claim is tried again. */
const SYNC_AGAIN_MS = 500;

/** How many leases a done's publication is tried for at most, while races are lost. */
const PUBLISH_LEASES = 5;

function lf(text: string): string {
  return text.replace(/\r\n/g, '\n');
}

function holderOf(judged: JudgedClaim): string {
  const host = judged.record?.holder.host ?? 'another host';
  return judged.judgement === 'done' ? `${host} (done)` : host;
}

/** A file edit as a branch edit: a refusal (a tag no longer there) is `not-applicable`. */
function orNull(edit: FileEdit): (text: string) => string | null {
  return (text) => {
    try {
      return edit(text) ?? text;
    } catch {
      return null;
    }
  };
}

/** A done counts only when its lease's end won (with the edit, or after it, alone). */
function doneOf(
  written: { outcome: BranchEditOutcome; lease: HeldLease } | undefined,
): DoneWrite | null {
  if (written === undefined)
    return {
      counted: false,
      why: `its lease ${LEASE_MOVED_ON}`,
    };
  const { outcome, lease } = written;
  switch (outcome.kind) {
    case 'pushed':
    case 'unchanged':
    case 'gone':
      if (lease.record.state === 'done') return { counted: true };
      return {
        counted: false,
        why: `its lease ${LEASE_MOVED_ON}`,
      };
    case 'fenced':
      return {
        counted: false,
        why: `its lease ${LEASE_MOVED_ON}`,
      };
    case 'not-applicable':
      return { counted: false, why: 'the shared branch no longer shows its claim' };
    default:
      return null;
  }
}

/** The lease moved on: the write was fenced, or no lease was left to write with. */
function isFenced(outcome: BranchEditOutcome | undefined): boolean {
  return outcome === undefined || outcome.kind === 'fenced';
}

function outcomeText(outcome: BranchEditOutcome): string {
  return 'message' in outcome ? outcome.message : outcome.kind;
}
