/**
 * What `engine status` shows, read from the files: whether a daemon runs and any pause, what needs
 * you, the waiting `#delegated-X` items in dispatch order with why each waits, the claims with
 * their session and whether its agent lives, and what finished recently. The IO shell around the
 * pure parts (needs-you, not-dispatched, wait-reasons, done-items, daemon-presence).
 */
import { realpath, stat } from 'node:fs/promises';
import { readDaemonLock } from '../daemon/daemon-lock.js';
import type { DispatchTable } from '../dispatch/dispatch-table.js';
import { claimOf, workItemsOf, type FileWork } from '../dispatch/work-items.js';
import {
  agingOf,
  dispatchOrder,
  readiness,
  readyAtOf,
  type OrderKey,
  type Readiness,
} from '../dispatch/work-order.js';
import { readRequestFile } from '../files/read-text-file.js';
import { systemProbe, type ProcProbe } from '../process/process-identity.js';
import { readEvents } from '../sessions/event-log.js';
import type { JudgeOptions } from '../sessions/judge-session.js';
import { admission, readPause, type LimitPause } from '../sessions/limit-pause.js';
import { blockersOf } from '../order/read-dependencies.js';
import type { TagOccurrence } from '../tags/scan-tags.js';
import { titleOf } from '../approve/approval-items.js';
import { ScanPool, type ScanSummary, type StatusScan } from '../tags/scan-pool.js';
import { lifecycleOf } from '../tags/tag-name.js';
import { walkMarkdownFiles } from '../tags/walk-markdown.js';
import { describeClaim, type ClaimItem } from './claim-item.js';
import { daemonPresence, type DaemonPresence } from './daemon-presence.js';
import { doneItems, itemKey } from './done-items.js';
import { hostsClaimsOf, judgedByLease, type HostsClaims } from './hosts-claims.js';
import { inputWait, needsOfFile, needsOrder, type NeedsYou } from './needs-you.js';
import { queueSourceOf, type QueueSource } from './queue-source.js';
import { recordedOf, type DoneItem } from './recorded-end.js';
import { waitReasonOf, withSlotWaits, type WaitReason } from './wait-reasons.js';

export type { ClaimItem } from './claim-item.js';
export type { DoneItem } from './recorded-end.js';
export type { HostsClaims } from './hosts-claims.js';
export type { QueueSource } from './queue-source.js';

export interface WaitingItem {
  file: string;
  noun: string;
  skill: string;
  weight: number;
  tablePriority: number;
  /** Ordered one band up by --aging (dispatch/work-order.ts isAged). */
  aged: boolean;
  /** Why the daemon would not claim it now (wait-reasons.ts); null: it would, first come. */
  wait: WaitReason | null;
}

/** A `#next-X` on the Tags line or front matter: queued for the next skill, not the daemon. */
export interface NextItem {
  file: string;
  tag: string;
  noun: string;
  title: string;
}

export interface StatusReport {
  root: string;
  /** The directories whose requests were read (the daemon's, unless given). */
  paths: string[];
  daemon: DaemonPresence;
  /** The queue-wide pause after a usage limit (sessions/.engine/pause.json), or null. */
  paused: LimitPause | null;
  needsYou: NeedsYou[];
  waiting: WaitingItem[];
  /** `#next-X` items, which the next skill claims (never the daemon). */
  next: NextItem[];
  running: ClaimItem[];
  stale: ClaimItem[];
  /** Finished in the last 24 h, each item once, most recent first; `doneMore` more not listed. */
  done: DoneItem[];
  doneMore: number;
  /** With `"claims": "git"` only: every host's claims as last fetched (hosts-claims.ts). */
  hosts?: HostsClaims;
  /** With `"claims": "git"` only: where the queue was read (queue-source.ts). */
  queue?: QueueSource;
}

/** How claims are judged and items ordered: the project's settings, as its daemon has them. */
export interface StatusJudging {
  now: Date;
  options: JudgeOptions;
  probe: ProcProbe;
  /** The daemon's --debounce-ms: how long a file must be quiet before it is read. */
  debounceMs: number;
  /** The daemon's --max-agents; 0: no cap. */
  maxAgents: number;
  /** The daemon's --aging, in ms; 0: off. */
  agingMs: number;
  /** With git claims, the remote whose claims every host holds (hosts-claims.ts); else null. */
  hostsRemote?: string | null;
}

const DAY_MS = 24 * 3600_000;

/** Files read at once by a status: enough to keep the thread pool and the scan busy. */
const FILES_IN_FLIGHT = 32;

/**
 * Where the files come from: a walk of each path and a pool of its own (the CLI), or the daemon's
 * tag index (the files that may carry a tag, in the walk's order) and its scan (the fast path
 * on its own thread, its pool for the rest: the same summary).
 */
export interface StatusSource {
  list?: (dir: string) => AsyncIterable<string> | Iterable<string>;
  scan?: (text: string) => Promise<ScanSummary>;
  /** What a file gave, kept while it does not change (the daemon's; see FileFindingsCache). */
  cache?: FileFindingsCache;
}

/**
 * What files gave, by path, under one dispatch table and debounce: the holder forgets a path
 * when it changes. Only findings that do not depend on the clock or on other files are kept (no
 * waiting item, no claim): at 50,000 files those are nearly all, and reading them is the cost.
 */
export interface FileFindingsCache {
  get(path: string): FileFindings | undefined;
  /**
   * `files` (a list the source keeps) less those kept as giving nothing, in their order: a status
   * at 50,000 files goes through the few that give something, not all 50,000, each time.
   */
  withFindings?(files: readonly string[]): readonly string[];
  /** Taken before a file is read; set() keeps nothing if the file changed since. */
  token(): number;
  set(path: string, findings: FileFindings, token: number): void;
}

/** One file's part of the report: opaque to all but this module. */
export type FileFindings = Found;

export async function collectStatus(
  root: string,
  paths: string[],
  table: DispatchTable,
  given: Partial<StatusJudging> & Pick<StatusJudging, 'options'>,
  source: StatusSource = {},
): Promise<StatusReport> {
  const judging: StatusJudging = {
    now: new Date(),
    probe: systemProbe,
    // The CLI passes the project's; 0: no quiet period, and no cap.
    debounceMs: 0,
    maxAgents: 0,
    agingMs: 0,
    ...given,
  };
  const queue = await queueSourceOf(root, paths, judging.hostsRemote ?? null);
  // In the daemon's checkout, `Depends On` entries name the checkout's files, as the daemon's do.
  const dependencyRoot = queue?.kind === 'checkout' ? queue.root : root;
  const found = await scanPaths(dependencyRoot, paths, table, judging, source);
  const hosts = await hostsClaimsOf(root, judging.now, judging.hostsRemote ?? null);
  const described = await Promise.all(found.claims.map((c) => describeClaim(root, c, judging)));
  const claims = described.map((c) => judgedByLease(c, hosts));
  const running = claims.filter((c) => c.alive);
  const paused = await readPause(root);
  const events = await readEvents(root);
  const current = new Set(claims.map((c) => itemKey(c.file, c.noun)));
  const done = doneItems(events, judging.now.getTime() - DAY_MS, current);
  const waits = running.map(inputWait).filter((n) => n !== null);
  return {
    root,
    paths,
    daemon: daemonPresence(await readDaemonLock(root), events, judging.probe),
    paused,
    needsYou: needsOrder([...waits, ...found.needs]),
    waiting: withSlotWaits(
      dispatchOrder(found.waiting, agingOf(judging.agingMs, judging.now.getTime())).map(
        ({ item, aged }) => ({ ...item, aged }),
      ),
      {
        maxAgents: judging.maxAgents,
        capOf: (noun) => table.get(noun)?.max,
        // Another host's agents count against that host's caps, not this one's.
        running: running.filter((c) => c.held === undefined).map((c) => c.noun),
        pause: paused,
        admission: admission(paused, judging.now),
      },
    ),
    next: found.next,
    running,
    stale: claims.filter((c) => !c.alive),
    done: await Promise.all(done.items.map((e) => recordedOf(root, e))),
    doneMore: done.more,
    ...(hosts === undefined ? {} : { hosts }),
    ...(queue === undefined ? {} : { queue }),
  };
}

/** A waiting item with what orders it. */
type Ordered = OrderKey & Readiness & { item: WaitingItem };

/** A claim as found in a file, to be judged. */
export interface FoundClaim {
  file: string;
  noun: string;
  text: string;
  mtime: number;
}

export interface Found {
  waiting: Ordered[];
  needs: NeedsYou[];
  next: NextItem[];
  claims: FoundClaim[];
}

/** `root`: what `Depends On` entries are resolved against. */
async function scanPaths(
  root: string,
  paths: string[],
  table: DispatchTable,
  judging: StatusJudging,
  source: StatusSource,
): Promise<Found> {
  const pool = source.scan ? null : new ScanPool();
  const scan = source.scan ?? ((text: string) => (pool as ScanPool).scan(text));
  const list = source.list ?? ((dir: string) => walkMarkdownFiles(dir));
  const found: Found = { waiting: [], needs: [], next: [], claims: [] };
  const scanAndKeep = async (path: string): Promise<Found | null> => {
    const token = source.cache?.token() ?? 0;
    const read = await scanFile({ scan, root, table }, path, judging);
    if (read === null) return null;
    if (isKept(read)) source.cache?.set(path, read.found, token);
    return read.found;
  };
  const add = (one: Found | null): void => {
    if (one === null) return;
    found.waiting.push(...one.waiting);
    found.needs.push(...one.needs);
    found.next.push(...one.next);
    found.claims.push(...one.claims);
  };
  const reads = new OrderedReads(add);
  const take = (path: string): Promise<void> | undefined =>
    reads.take(source.cache?.get(path) ?? (() => scanAndKeep(path)));
  try {
    for (const dir of paths) {
      const listed = list(dir);
      // A list in memory (the daemon's index) is walked without an await per file: an await
      // is a turn of the microtask queue, even of undefined.
      if (Symbol.iterator in listed) {
        const files =
          Array.isArray(listed) && source.cache?.withFindings
            ? source.cache.withFindings(listed as readonly string[])
            : listed;
        for (const path of files) {
          const wait = take(path);
          if (wait) await wait;
        }
      } else {
        for await (const path of listed) await take(path);
      }
    }
    await reads.drain();
  } finally {
    await pool?.close();
  }
  return found;
}

/**
 * Files' findings added in the walk's order, with several files read at once: one at a time,
 * each file's realpath and stat waited a thread-pool round trip, and a first status at 50,000
 * files took 25 s. Findings kept from before are added at once when nothing is being read.
 */
class OrderedReads {
  private readonly inFlight: Array<Found | null | Promise<Found | null>> = [];

  constructor(private readonly add: (one: Found | null) => void) {}

  /** Undefined when there is nothing to wait for (most files, from the daemon's cache). */
  take(kept: Found | (() => Promise<Found | null>)): Promise<void> | undefined {
    if (typeof kept !== 'function' && this.inFlight.length === 0) {
      this.add(kept);
      return undefined;
    }
    const one = typeof kept === 'function' ? kept() : kept;
    // Handled here, thrown where it is awaited: a later file's failure must not be unhandled.
    if (one instanceof Promise) one.catch(() => undefined);
    this.inFlight.push(one);
    return this.inFlight.length < FILES_IN_FLIGHT ? undefined : this.next();
  }

  async drain(): Promise<void> {
    while (this.inFlight.length > 0) await this.next();
  }

  private async next(): Promise<void> {
    this.add(await (this.inFlight.shift() as Found | null | Promise<Found | null>));
  }
}

/**
 * One file's waiting items, what of it needs you, and its claims, with its number of names (hard
 * links). Read when it holds a `#` or a
 * front matter `tags:` key: anything else carries no tag, not even a misspelled one.
 */
async function scanFile(
  context: ScanContext,
  path: string,
  judging: StatusJudging,
): Promise<{ found: Found; names: number } | null> {
  const read = readRequestFile(path, ['#', 'tags:']);
  if (read.kind !== 'text') return null;
  const { text } = read.file;
  const scan = await context.scan(text).catch(() => null);
  if (!scan) return null;
  const file = await realpath(path).catch(() => path);
  const info = await stat(path).catch(() => null);
  const stats = { mtimeMs: info?.mtimeMs ?? 0, nlink: info?.nlink ?? 1 };
  return findingsOf(context, { file, text, scan, stats }, judging);
}

interface ScanContext {
  scan: (text: string) => Promise<ScanSummary>;
  root: string;
  table: DispatchTable;
}

/** A file as read: its real path, text, scan, and the stat a status needs of it. */
interface ReadFile {
  file: string;
  text: string;
  scan: StatusScan;
  stats: { mtimeMs: number; nlink: number };
}

async function findingsOf(
  { scan: scanText, root, table }: ScanContext,
  { file, text, scan, stats }: ReadFile,
  { now, debounceMs }: StatusJudging,
): Promise<{ found: Found; names: number }> {
  const mtime = stats.mtimeMs;
  const names = stats.nlink;
  const facts = { mtimeMs: mtime, lastRecovery: scan.lastRecovery };
  const work = workItemsOf(file, scan.occurrences, (noun) => table.get(noun) ?? null, {
    readyAt: readyAtOf(facts, debounceMs),
  });
  const ready = readiness({ ...facts, claim: claimOf(work) }, debounceMs, now.getTime());
  const { occurrences, lastRecovery } = scan;
  // As the daemon does: a dependency holds the item before anything else would.
  const blockers =
    work.items.length === 0 ? [] : await blockersOf(root, file, scan.dependsOn, scanText);
  const wait: WaitReason | null =
    blockers.length > 0
      ? { kind: 'blocked', by: blockers }
      : ready.wait && waitReasonOf(ready.wait);
  const found = {
    // The daemon never dispatches a file with more than one name: it needs you instead.
    waiting: names > 1 ? [] : waitingIn(file, work, ready, wait),
    needs: needsOfFile({ file, text, occurrences, work, lastRecovery, names }),
    next: nextIn(file, text, occurrences),
    claims: work.claims.filter((c) => !c.done).map(({ noun }) => ({ file, noun, text, mtime })),
  };
  return { found, names };
}

/** Whether a file's findings hold nothing that changes with the clock or other files. */
function isKept({ found, names }: { found: Found; names: number }): boolean {
  // A hard link added or removed outside the tree changes a file's findings with no event.
  return names === 1 && found.waiting.length === 0 && found.claims.length === 0;
}

/**
 * Keeps in `cache` what a file read elsewhere gives a status (the daemon's tag index, as it is
 * built: the warm-up then reads only the files not kept), as a status would have kept it.
 * `token`: the cache's, taken before the file was read. A file with items to dispatch is never
 * kept (its wait depends on the clock and on other files).
 */
/** What keepFindings judges a file with, and where it keeps what it finds. */
export type KeepContext = ScanContext & {
  judging: StatusJudging;
  cache: FileFindingsCache;
  token: number;
};

export async function keepFindings(
  read: ReadFile & { path: string },
  context: KeepContext,
): Promise<void> {
  const one = await findingsOf(context, read, context.judging);
  if (isKept(one)) context.cache.set(read.path, one.found, context.token);
}

/** The dispatchable `#delegated-X` items of a file (the others need you), with its readiness. */
function waitingIn(
  file: string,
  work: FileWork,
  ready: Readiness,
  wait: WaitReason | null,
): Ordered[] {
  return work.items.map(({ noun, skill, weight, tablePriority }) => ({
    ...ready,
    weight,
    tablePriority,
    file,
    noun,
    item: {
      file,
      noun,
      skill,
      weight,
      tablePriority,
      aged: false,
      wait,
    },
  }));
}

/** The file's `#next-X` items (its Tags line and front matter: prose is no state). */
function nextIn(file: string, text: string, occurrences: readonly TagOccurrence[]): NextItem[] {
  const tags = new Set(occurrences.filter((o) => o.place !== 'prose').map((o) => o.tag));
  return [...tags].flatMap((tag) => {
    const life = lifecycleOf(tag);
    return life?.state === 'next'
      ? [{ file, tag, noun: life.noun, title: titleOf(text, file) }]
      : [];
  });
}
