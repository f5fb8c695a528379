/**
 * The item table's machine: what a read of a request file makes of its rows, admission (one walk
 * in dispatch order over the caps and the pause, admission.ts), the launch and follow of an
 * admitted item, the adoption of a live claim, and one timer for the earliest parked item.
 * `--once` is one tick of it; `--dry-run` lists its table.
 */
import { realpath } from 'node:fs/promises';
import { blockerText, isHeldByMistake } from '../dispatch/depends-on.js';
import { dispatchOrder, type Aging } from '../dispatch/work-order.js';
import { messageOf } from '../errors.js';
import { decideAdmission, type Admission } from './admission.js';
import type { ClaimVerdict } from './claim-check.js';
import { claimStoreOf } from './claim-store.js';
import type { DaemonShared } from './daemon-shared.js';
import type { SessionFollower } from './follow-session.js';
import type { Governor } from './governor.js';
import { HOLDS_SLOT, type ItemKind, type ItemRow, type ItemState } from './item-table.js';
import type { Launched, Launcher } from './launch.js';
import type { FileRead, PlannedItem } from './request-snapshot.js';

/** The rows a read decides anew; the others hold a slot, and their claim's end frees them. */
const READ_DECIDES: readonly ItemKind[] = [
  'blocked',
  'parked',
  'claimed',
  'elsewhere',
  'not-dispatchable',
];
const READY: readonly ItemKind[] = ['queued', 'waiting-slot'];
/** The rows of items approved and not yet admitted. */
const WAITING: readonly ItemKind[] = ['blocked', 'parked', ...READY];
/** Rows a read decides and no launch holds: what a new §TAG_DISPATCH table is to judge again. */
export const UNLAUNCHED: readonly ItemKind[] = [...WAITING, 'not-dispatchable'];
/** Node runs a longer timer at once (a 32-bit delay): a far Not Before is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const isIn = (row: ItemRow | undefined, kinds: readonly ItemKind[]): boolean =>
  row === undefined || kinds.includes(row.state.kind);

export interface DispatcherParts {
  launcher: Launcher;
  follower: SessionFollower;
  governor: Governor;
  /** Hands a file back to the settle stage, to be read once quiet. */
  settleAt: (file: string, at: number) => void;
}

export class Dispatcher {
  /** No item is admitted before the adoption at start is over, nor once the daemon stops. */
  private open = false;
  /** Whether timers run (the daemon), or not (--once, --dry-run). */
  private timed = false;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Number.POSITIVE_INFINITY;
  /** One admission pass at a time, so that a slot or the probe is given once. */
  private admitting: Promise<void> = Promise.resolve();
  private readonly launches = new Set<Promise<unknown>>();
  /** The re-read of the blocked items, already asked for. */
  private recheck: NodeJS.Timeout | null = null;

  constructor(
    private readonly shared: DaemonShared,
    private readonly parts: DispatcherParts,
  ) {}

  /** Admission opens (after the adoption at start); with `timed`, parked items wake on time. */
  start(timed: boolean): Promise<void> {
    this.open = true;
    this.timed = timed;
    // An item read not yet quiet before now was handed to no settle (untimed then): a timer
    // fires up to a millisecond early by Date.now(), so even its settled read may have parked it.
    if (timed)
      for (const { file, state } of this.shared.table.list('parked'))
        if (state.kind === 'parked' && state.why === 'quiet')
          this.parts.settleAt(file, state.until);
    this.schedule();
    return this.admit();
  }

  stop(): void {
    this.open = false;
    for (const timer of [this.timer, this.recheck])
      if (timer) this.shared.ctx.timers.clearTimeout(timer);
    this.timer = null;
    this.recheck = null;
  }

  /** Resolves once every launch admitted so far has been made (--once). */
  async launched(): Promise<void> {
    await this.admitting;
    await Promise.allSettled([...this.launches]);
  }

  /** Every item waiting, in the order the daemon claims them (the rule of dispatch/work-order.ts). */
  order(): Array<PlannedItem & { aged: boolean }> {
    const waiting = this.shared.table.list(...WAITING);
    return dispatchOrder(
      waiting.flatMap((row) => (row.item ? [row.item] : [])),
      this.aging(),
    );
  }

  /**
   * What a read of `path` makes of its rows (null: unreadable or skipped, its claims kept). With
   * `restore`, an approval saved over a live claim restores that claim (never for --dry-run).
   */
  async see(path: string, read: FileRead | null, restore = true): Promise<void> {
    const { table } = this.shared;
    // Rows are keyed by the real path; a file not read is looked up by it too.
    const file = read?.file ?? (await realpath(path).catch(() => path));
    const seen = new Set<string>();
    for (const noun of read?.claims ?? []) {
      seen.add(noun);
      this.moveRead(file, noun, { kind: 'claimed' }, 'its claim was read');
    }
    for (const { noun, why } of read?.unrouted ?? []) {
      seen.add(noun);
      this.moveRead(file, noun, { kind: 'not-dispatchable', why }, why);
    }
    for (const item of read?.items ?? []) {
      seen.add(item.noun);
      await this.seeItem(item, restore);
    }
    for (const row of table.ofFile(file)) {
      if (seen.has(row.noun) || (read === null && row.state.kind === 'claimed')) continue;
      this.moveRead(file, row.noun, null, 'no longer approved in its file');
    }
    this.recheckBlocked(file);
    this.schedule();
    void this.admit();
  }

  /** A move a read decides, made only while the row holds no slot. */
  private moveRead(
    file: string,
    noun: string,
    to: ItemState | null,
    why: string,
    item?: PlannedItem,
  ): boolean {
    const row = this.shared.table.get(file, noun);
    if (!isIn(row, [...READ_DECIDES, ...READY])) return false;
    // A ready item keeps its place while it stays ready: only its item is read anew.
    if (to?.kind === 'queued' && row && isIn(row, READY))
      return this.shared.table.move(file, noun, row.state, why, item);
    return this.shared.table.move(file, noun, to, why, item);
  }

  private async seeItem(item: PlannedItem, restore: boolean): Promise<void> {
    const { table, ctx } = this.shared;
    const { file, noun } = item;
    let row = table.get(file, noun);
    if (row?.state.kind === 'running') {
      // An editor's older copy over a live claim, or an approval while the claim ends.
      if (restore && (await this.parts.launcher.restoreClaim(item))) return;
      row = table.get(file, noun);
      if (row?.state.kind === 'running') {
        table.move(file, noun, { kind: 'ending', session: row.state.session }, 'approved again');
        ctx.log('debug', `held ${file} #delegated-${noun} until its ending claim has ended`);
        return;
      }
    }
    if (!isIn(row, [...READ_DECIDES, ...READY])) return;
    // Another host holds it: this text is not claimed again here; a new text is read anew.
    if (row?.state.kind === 'elsewhere' && row.item?.snapshot.text === item.snapshot.text) return;
    if (item.blockers.length > 0) return this.block(item);
    if (item.wait) return this.park(item);
    const known = isIn(row, READY) && row !== undefined;
    if (!known && restore && (await this.parts.launcher.restoreClaim(item))) {
      this.moveRead(file, noun, null, 'its live claim was restored');
      return;
    }
    if (this.moveRead(file, noun, { kind: 'queued' }, 'ready', item) && !known)
      ctx.log(
        'debug',
        `queued ${file} #delegated-${noun} (P${item.weight}, priority ${item.tablePriority})`,
      );
  }

  /** Held after the requests it depends on: read again whenever another request is read. */
  private block(item: PlannedItem): void {
    const { file, noun, blockers } = item;
    const by = blockers.map(blockerText);
    if (this.moveRead(file, noun, { kind: 'blocked', by }, 'a dependency holds it', item))
      this.shared.ctx.log('debug', `held ${file} #delegated-${noun}: ${by.join('; ')}`);
    this.warnHeldByMistake(item);
  }

  /**
   * A hold by a mistake in the files, which only a human's edit ends (a cycle, ...), is warned
   * once: a cycle once for all its items (it names them), any other once per file and reason.
   */
  private warnHeldByMistake({ file, noun, blockers }: PlannedItem): void {
    for (const blocker of blockers.filter(isHeldByMistake)) {
      const key =
        blocker.kind === 'cycle'
          ? `cycle:${[...blocker.cycle].sort().join('\0')}`
          : `held:${file}:${blockerText(blocker)}`;
      this.shared.warnOnce(
        key,
        `held ${file} #delegated-${noun}: ${blockerText(blocker)}; it waits until its Depends On line, or a file it names, is changed`,
      );
    }
  }

  /**
   * A request was read that holds no blocked item: any blocked item may depend on it, and is read
   * again, once per --debounce-ms for a burst of reads (not in the first pass, which reads all).
   */
  private recheckBlocked(file: string): void {
    const { table, ctx } = this.shared;
    if (!this.timed || this.recheck || this.shared.stopping) return;
    if (table.list('blocked').length === 0) return;
    if (table.ofFile(file).some((row) => row.state.kind === 'blocked')) return;
    this.recheck = ctx.timers.setTimeout(() => {
      this.recheck = null;
      this.wakeBlocked();
    }, ctx.options.debounceMs);
  }

  /** Every blocked item is read again (its dependencies may have changed unseen). */
  wakeBlocked(): void {
    const { table } = this.shared;
    if (this.shared.stopping) return;
    for (const file of new Set(table.list('blocked').map((row) => row.file))) table.wake(file);
  }

  /** An item not ready yet is parked until its time, or until its file changes. */
  private park(item: PlannedItem): void {
    const { file, noun, wait } = item;
    if (!wait) return;
    const what = `${file} #delegated-${noun}`;
    if (wait.kind === 'claim') {
      // The claim's end changes the file, which is then read again.
      const to: ItemState = { kind: 'parked', until: Number.POSITIVE_INFINITY, why: 'claim' };
      if (this.moveRead(file, noun, to, `after ${wait.tag}`, item))
        this.shared.ctx.log(
          'debug',
          `held ${what}: the file carries ${wait.tag}, one claim at a time`,
        );
      return;
    }
    const why = wait.kind;
    this.moveRead(file, noun, { kind: 'parked', until: wait.until, why }, why, item);
    // Read before its quiet period ended (a look not made by the settle stage): settled then.
    if (why === 'quiet' && this.timed) this.parts.settleAt(file, wait.until);
  }

  /** Priority aging (--aging) on the daemon's clock now; null: off. */
  private aging(): Aging | null {
    const { options, now } = this.shared.ctx;
    return options.agingMs > 0 ? { afterMs: options.agingMs, now: now().getTime() } : null;
  }

  /** Admission: the ready items, in dispatch order, within the caps and the pause. */
  admit(): Promise<void> {
    const run = () => this.admitPass();
    const result = this.admitting.then(run, run);
    this.admitting = result.catch((error: unknown) =>
      this.shared.ctx.log('error', `admission: ${String(error)}`),
    );
    return result;
  }

  private async admitPass(): Promise<void> {
    const { table, ctx } = this.shared;
    if (!this.open || this.shared.stopping || table.list(...READY).length === 0) return;
    const pause = await this.parts.governor.gate();
    const decisions = decideAdmission({
      ready: table.list(...READY),
      held: (noun) => table.slotsHeld(noun),
      capOf: (noun) => ctx.routes.cap(noun),
      maxAgents: ctx.options.maxAgents,
      pause,
      aging: this.aging(),
    });
    for (const decision of decisions) await this.apply(decision);
  }

  private async apply(decision: Admission): Promise<void> {
    const { table, ctx } = this.shared;
    const { file, noun } = decision.item;
    if (!this.open || !isIn(table.get(file, noun), READY) || !table.get(file, noun)) return;
    if ('wait' in decision) {
      const to: ItemState = { kind: 'waiting-slot', for: decision.wait };
      if (table.move(file, noun, to, `no slot (${decision.wait})`) && decision.cap !== undefined)
        ctx.log('debug', `held ${file} #delegated-${noun}: Max ${decision.cap} of its agents run`);
      return;
    }
    if (decision.go === 'probe' && !(await this.parts.governor.takeProbe(decision.item))) {
      if (isIn(table.get(file, noun), READY) && table.get(file, noun))
        table.move(file, noun, { kind: 'waiting-slot', for: 'probe' }, 'another item probes');
      return;
    }
    const row = table.get(file, noun);
    if (!row?.item || !isIn(row, READY)) {
      if (decision.go === 'probe') await this.parts.governor.launched(decision.item, null);
      return;
    }
    table.move(
      file,
      noun,
      { kind: 'launching' },
      decision.go === 'probe' ? 'the probe' : 'admitted',
    );
    const launch = this.shared.track(this.launchAndFollow(row.item));
    this.launches.add(launch);
    void launch.catch(() => undefined).finally(() => this.launches.delete(launch));
    // --once claims one item after another, in dispatch order; the daemon does not wait here.
    if (!this.timed) await launch.catch(() => undefined);
  }

  /** Claims and spawns an admitted item; then its row holds the slot until its claim ends. */
  private async launchAndFollow(item: PlannedItem): Promise<void> {
    const { table, ctx } = this.shared;
    const { file, noun } = item;
    let launched: Launched = { session: null };
    try {
      if (!this.shared.stopping) launched = await this.parts.launcher.launch(item);
    } catch (error) {
      // It may have failed after its claim: the file is read again, and a claim found there is
      // the reaper's to judge (a read while it launched was not taken: it holds a slot).
      ctx.log('error', `dispatch ${file}: ${String(error)}`);
      launched = { session: null, reread: true };
    }
    const ref = launched.session;
    await this.parts.governor.launched(item, ref);
    if (launched.retryAt !== undefined) {
      const to: ItemState = { kind: 'parked', until: launched.retryAt, why: 'not-before' };
      table.move(file, noun, to, 'its claim is tried again', item);
      this.schedule();
      return;
    }
    if (launched.elsewhere !== undefined) {
      const to: ItemState = { kind: 'elsewhere', host: launched.elsewhere };
      table.move(file, noun, to, `claimed on ${launched.elsewhere}`, item);
      void this.admit();
      return;
    }
    if (ref === null) {
      table.move(file, noun, null, launched.reread ? 'to be read again' : 'not claimed');
      // Its file is read again now: the snapshot the claim was refused for is out of date.
      if (launched.reread && !this.shared.stopping) table.wake(file);
      void this.admit();
      return;
    }
    table.move(file, noun, { kind: 'running', session: ref }, 'claimed and spawned');
    if (this.shared.adopting) await this.follow(file, noun, ref);
  }

  /**
   * A live claim found by the reaper: a `running` row holding its slot, followed until it ends
   * (while adopting: --once follows nothing).
   */
  adopt(file: string, noun: string, session: string): void {
    const { ctx, table } = this.shared;
    table.move(file, noun, { kind: 'running', session }, 'adopted');
    if (!this.shared.adopting) return;
    // A claim followed to a moved request is known under its new path from now on.
    this.shared.sessions.add(file, session);
    ctx.log('info', `adopted running agent for ${file} (${session})`);
    void ctx.recordEvent({ event: 'adopted', file, noun, session }).catch(() => undefined);
    void this.shared.track(this.follow(file, noun, session)).catch(() => undefined);
  }

  /** Follows the claim until it ends; then its slot is free, and an approval seen meanwhile read. */
  private async follow(file: string, noun: string, session: string): Promise<void> {
    const { table } = this.shared;
    // How the claim ended: a request gone from its path is followed on at its new one.
    let ended: Ended = 'threw';
    try {
      ended = (await this.parts.follower.untilEnded(file, noun, session))?.kind ?? 'alive';
    } finally {
      if (!this.shared.stopping && LETS_GO.has(ended))
        await claimStoreOf(this.shared.ctx)
          .followEnded?.(session)
          .catch((error: unknown) =>
            this.shared.ctx.log('error', `claims: ${session}: ${messageOf(error)}`),
          );
      const row = table.get(file, noun);
      if (row && HOLDS_SLOT.includes(row.state.kind)) {
        table.move(file, noun, null, 'its claim ended');
        // A request back at its path (git rewrote it) is read again: its claim is followed anew.
        const again = row.state.kind === 'ending' || ended === 'gone';
        if (again && !this.shared.stopping) table.wake(file);
      }
      void this.admit();
    }
  }

  /** One timer, at the earliest Not Before of the parked items: they are ready then. */
  private schedule(): void {
    if (!this.timed || !this.open || this.shared.stopping) return;
    const { ctx, table } = this.shared;
    const parked = table
      .list('parked')
      .flatMap((row) =>
        row.state.kind === 'parked' && row.state.why === 'not-before' ? [row.state.until] : [],
      );
    const at = Math.min(...parked);
    if (at >= this.timerAt || !Number.isFinite(at)) return;
    if (this.timer) ctx.timers.clearTimeout(this.timer);
    this.timerAt = at;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, at - ctx.now().getTime()));
    this.timer = ctx.timers.setTimeout(() => this.ripen(), delay);
  }

  private ripen(): void {
    const { table, ctx } = this.shared;
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = ctx.now().getTime();
    for (const row of table.list('parked')) {
      if (row.state.kind !== 'parked' || row.state.why !== 'not-before') continue;
      if (row.state.until > now || !row.item) continue;
      table.move(row.file, row.noun, { kind: 'queued' }, 'its Not Before passed', {
        ...row.item,
        wait: null,
      });
    }
    this.schedule();
    void this.admit();
  }
}

/** How a followed claim ended; `threw`: its follow failed (its lease is kept, as it was). */
type Ended = ClaimVerdict['kind'] | 'threw';

/** The ends of a followed claim after which its session is let go where claims are kept. */
const LETS_GO = new Set<Ended>(['done', 'not-claimed', 'foreign', 'requeued']);
