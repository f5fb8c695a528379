/**
 * The daemon's item table: one row per request file and noun, holding where the item stands in
 * this daemon between "read" and "its claim ended". Its states and the moves between them are
 * data (ITEM_TRANSITIONS); `move` is the one writer of a row, refuses a move the table does not
 * list, and records each move once (a debug line, and the recent events kept in memory for a
 * later `engine status` over a control socket). In memory only, like everything the daemon
 * knows besides the files: a restarted daemon reads the files again and builds it anew.
 * (pueue's State and concurrently's changeState() are the models.)
 */
import type { PlannedItem } from './request-snapshot.js';

/** Why a ready item waits for a slot. */
export type SlotWait = 'noun' | 'agents' | 'pause' | 'probe';

/** Why an item is parked until a time (Infinity: until its file changes). */
export type ParkReason = 'quiet' | 'not-before' | 'claim';

export type ItemState =
  /** Held by items it depends on (their paths). */
  | { kind: 'blocked'; by: string[] }
  /** Not ready before `until`: its quiet period, a retry's Not Before, the file's other claim. */
  | { kind: 'parked'; until: number; why: ParkReason }
  /** Ready, and held back by a cap or the usage-limit pause. */
  | { kind: 'waiting-slot'; for: SlotWait }
  /** Ready, not yet looked at by admission. */
  | { kind: 'queued' }
  /** Admitted: its claim and spawn are under way. */
  | { kind: 'launching' }
  /** Its claim is followed by this daemon (launched here, or adopted): it holds a slot. */
  | { kind: 'running'; session: string }
  /** Approved again while its claim is still ending: read again once the claim has ended. */
  | { kind: 'ending'; session: string }
  /** A claim the file carries that this daemon does not follow: the reaper judges it. */
  | { kind: 'claimed' }
  /** Claimed by another host (many hosts, git): held by no slot here; `host` holds it. */
  | { kind: 'elsewhere'; host: string }
  /** Approved, and never dispatched as it is (no dispatchable row): read again on a new table. */
  | { kind: 'not-dispatchable'; why: string };

export type ItemKind = ItemState['kind'];

/** No row: the item is not in the table. */
export const ABSENT = 'absent';
export type RowKind = ItemKind | typeof ABSENT;

/** What a read of its file may make of a row this daemon does not hold a slot for. */
const READ: readonly RowKind[] = [
  'blocked',
  'parked',
  'queued',
  'claimed',
  'elsewhere',
  'not-dispatchable',
  ABSENT,
];

/**
 * The allowed moves. A read decides the rows that hold no slot; only admission puts an item in
 * `launching`, only a launch makes it `running`, only the end of the claim's follow frees it.
 */
export const ITEM_TRANSITIONS: Readonly<Record<RowKind, readonly RowKind[]>> = {
  absent: [...READ, 'running'],
  blocked: READ,
  parked: READ,
  queued: [...READ, 'waiting-slot', 'launching'],
  'waiting-slot': [...READ, 'waiting-slot', 'launching'],
  claimed: [...READ, 'running'],
  elsewhere: READ,
  'not-dispatchable': READ,
  launching: ['running', 'elsewhere', ABSENT],
  running: ['ending', ABSENT],
  ending: [ABSENT],
};

/** The states whose item holds an agent's slot. */
export const HOLDS_SLOT: readonly ItemKind[] = ['launching', 'running', 'ending'];

export interface ItemRow {
  file: string;
  noun: string;
  state: ItemState;
  /** The item as last read (null: only its claim was seen). */
  item: PlannedItem | null;
  /** When it entered its state (ms since the epoch). */
  since: number;
}

export interface ItemEvent {
  at: number;
  file: string;
  noun: string;
  from: RowKind;
  to: RowKind;
  why: string;
}

export class ForbiddenMoveError extends Error {
  constructor(file: string, noun: string, from: RowKind, to: RowKind) {
    super(`item ${file} #${noun}: no move from ${from} to ${to}`);
    this.name = 'ForbiddenMoveError';
  }
}

const keyOf = (file: string, noun: string): string => `${file}\0${noun}`;

/** How many recent moves the table keeps. */
const RECENT_EVENTS = 500;

function describe(state: ItemState | null): string {
  if (state === null) return ABSENT;
  switch (state.kind) {
    case 'blocked':
      return `blocked(${state.by.join(', ')})`;
    case 'parked':
      return `parked(${state.why}${Number.isFinite(state.until) ? ` until ${new Date(state.until).toISOString()}` : ''})`;
    case 'waiting-slot':
      return `waiting-slot(${state.for})`;
    case 'running':
    case 'ending':
      return `${state.kind}(${state.session})`;
    case 'not-dispatchable':
      return `not-dispatchable(${state.why})`;
    case 'elsewhere':
      return `elsewhere(${state.host})`;
    default:
      return state.kind;
  }
}

export class ItemTable {
  private readonly rows = new Map<string, ItemRow>();
  private readonly recent: ItemEvent[] = [];

  constructor(
    private readonly now: () => number,
    private readonly log: (message: string) => void,
    /** Reads a file again, as a settled change (the daemon's read stage). */
    private readonly reread: (file: string) => void,
  ) {}

  get(file: string, noun: string): ItemRow | undefined {
    return this.rows.get(keyOf(file, noun));
  }

  /**
   * Moves the item to `to` (null: out of the table), with the item as read when given. A move to
   * the state it is in changes no state and records nothing. Throws ForbiddenMoveError for a move
   * ITEM_TRANSITIONS does not list. Returns whether the state changed.
   */
  move(
    file: string,
    noun: string,
    to: ItemState | null,
    why: string,
    item?: PlannedItem | null,
  ): boolean {
    const key = keyOf(file, noun);
    const row = this.rows.get(key);
    const from: RowKind = row?.state.kind ?? ABSENT;
    const next: RowKind = to?.kind ?? ABSENT;
    if (row && item !== undefined) row.item = item;
    const before = describe(row?.state ?? null);
    if (before === describe(to)) return false;
    if (!ITEM_TRANSITIONS[from].includes(next))
      throw new ForbiddenMoveError(file, noun, from, next);
    const at = this.now();
    if (to === null) this.rows.delete(key);
    else if (row) Object.assign(row, { state: to, since: at });
    else this.rows.set(key, { file, noun, state: to, item: item ?? null, since: at });
    this.recent.push({ at, file, noun, from, to: next, why });
    if (this.recent.length > RECENT_EVENTS) this.recent.shift();
    this.log(`${file} #${noun}: ${before} → ${describe(to)}: ${why}`);
    return true;
  }

  /** The rows in one of `kinds` (all when none is given), as a list taken now. */
  list(...kinds: ItemKind[]): ItemRow[] {
    const all = [...this.rows.values()];
    return kinds.length === 0 ? all : all.filter((row) => kinds.includes(row.state.kind));
  }

  /** The rows of one file. */
  ofFile(file: string): ItemRow[] {
    return this.list().filter((row) => row.file === file);
  }

  /** Items holding an agent's slot: of `noun`, or of all nouns. */
  slotsHeld(noun?: string): number {
    return this.list(...HOLDS_SLOT).filter((row) => noun === undefined || row.noun === noun).length;
  }

  /** The moves made lately, oldest first. */
  events(): readonly ItemEvent[] {
    return this.recent;
  }

  /** Reads `file` again: its rows are decided anew from what it says now. */
  wake(file: string): void {
    this.reread(file);
  }
}
