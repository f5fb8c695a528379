/**
 * Bounded tag scanning: remark takes seconds on some inputs (20 KB of `*a`), so scans run in
 * worker threads, each with a time limit. A worker that overruns is terminated and replaced,
 * and the caller learns which text was skipped and why; one hostile file never stalls the rest.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { dependsOnOf } from './depends-on-line.js';
import { lastPriorSessionOf, sessionReferenceOf } from './lifecycle-edits.js';
import { attemptsSoFar, recoveryRecordsOf, type RecoveryRecord } from './recovery-entries.js';
import { requestDigest } from './request-digest.js';
import type { ScanProblem, TagOccurrence, TagScan } from './scan-tags.js';
import { startWorker } from './start-worker.js';

export interface ScanRequest {
  id: number;
  text: string;
}

export type ScanResponse = ({ id: number } & ScanSummary) | { id: number; error: string };

/** Sent once by a worker when its modules are loaded and it can take requests. */
export interface WorkerReady {
  ready: true;
}

/**
 * What a scan yields across a thread, all the daemon reads of a request: the tags, the problems,
 * the claim's Session line, the last Recovery entry (a retry's Not Before), the attempts so far,
 * the prior attempt's session, the text's digest (for a claim's resume plan), and what the
 * request depends on.
 */
export interface ScanSummary {
  occurrences: TagOccurrence[];
  problems: ScanProblem[];
  /** The session the claim's `**Session**:` line names (see sessionReference), or null. */
  session: string | null;
  lastRecovery: RecoveryRecord | undefined;
  /** Attempts recorded in its Recovery entries (attemptsSoFar). */
  attempts: number;
  /** The last Recovery entry's Prior Session (lastPriorSessionOf), or null. */
  priorSession: string | null;
  /** requestDigest of the text. */
  digest: string;
  /** Its `**Depends On**:` and `depends_on:` entries, as written (see dependsOnOf). */
  dependsOn: string[];
}

/** The summary of `scan`, the scan of `text`. */
/** What a status reads of a scan (collect-status.ts). */
export type StatusScan = Pick<ScanSummary, 'occurrences' | 'lastRecovery' | 'dependsOn'>;

/**
 * summaryOf's parts a status reads, without the rest: the digest alone hashes a normalised copy
 * of the text, garbage at each of the 50,000 files the daemon's status warm-up takes.
 */
export function statusScanOf(scan: TagScan): StatusScan {
  return {
    occurrences: scan.occurrences,
    lastRecovery: recoveryRecordsOf(scan).at(-1),
    dependsOn: dependsOnOf(scan),
  };
}

export function summaryOf(scan: TagScan, text: string): ScanSummary {
  const records = recoveryRecordsOf(scan);
  return {
    occurrences: scan.occurrences,
    problems: scan.problems,
    session: sessionReferenceOf(scan),
    lastRecovery: records.at(-1),
    attempts: attemptsSoFar(records),
    priorSession: lastPriorSessionOf(scan),
    digest: requestDigest(text, scan),
    dependsOn: dependsOnOf(scan),
  };
}

export class ScanTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`parsing took longer than ${timeoutMs} ms`);
    this.name = 'ScanTimeoutError';
  }
}

export interface ScanPoolOptions {
  /** Worker threads; default: the number of cores, at most 4. */
  size?: number;
  /** Time limit per text; default 3000 ms. */
  timeoutMs?: number;
  /** A worker idle this long is ended (its heap is about 10 MB); default IDLE_MS. */
  idleMs?: number;
}

interface Task {
  request: ScanRequest;
  resolve: (summary: ScanSummary) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  task: Task | null;
  timer: NodeJS.Timeout | null;
  /** The worker has loaded its modules; until then its start-up is not charged to a task. */
  ready: boolean;
}

/** A worker that has not loaded its modules by then is treated as crashed. */
const STARTUP_LIMIT_MS = 30_000;
/**
 * Most texts never reach a worker (the fast scan takes them): a daemon's workers would sit idle
 * for hours holding their memory. One started again costs about 100 ms.
 */
const IDLE_MS = 10_000;

export class ScanPool {
  private readonly size: number;
  private readonly timeoutMs: number;
  private readonly idleMs: number;
  private readonly slots: Slot[] = [];
  private readonly waiting: Task[] = [];
  private nextId = 0;
  private closed = false;

  constructor(options: ScanPoolOptions = {}) {
    this.size = options.size ?? Math.min(4, Math.max(1, availableParallelism()));
    this.timeoutMs = options.timeoutMs ?? 3000;
    this.idleMs = options.idleMs ?? IDLE_MS;
  }

  scan(text: string): Promise<ScanSummary> {
    if (this.closed) return Promise.reject(new Error('ScanPool is closed'));
    return new Promise((resolve, reject) => {
      this.waiting.push({ request: { id: this.nextId++, text }, resolve, reject });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const task of this.waiting.splice(0)) task.reject(new Error('ScanPool is closed'));
    await Promise.all(this.slots.splice(0).map((slot) => this.retire(slot)));
  }

  private pump(): void {
    while (this.waiting.length > 0) {
      const slot = this.slots.find((s) => s.task === null) ?? this.spawn();
      if (!slot) return;
      const task = this.waiting.shift() as Task;
      slot.task = task;
      // The time limit is for parsing: a cold worker's start-up (loading remark) is not counted.
      if (slot.ready) this.startTimer(slot);
      slot.worker.postMessage(task.request);
    }
  }

  private spawn(): Slot | null {
    if (this.slots.length >= this.size) return null;
    const worker = startWorker('scan-worker');
    const slot: Slot = { worker, task: null, timer: null, ready: false };
    slot.timer = setTimeout(
      () => this.onCrash(slot, new Error(`scan worker did not start in ${STARTUP_LIMIT_MS} ms`)),
      STARTUP_LIMIT_MS,
    ).unref();
    worker.on('message', (message: ScanResponse | WorkerReady) => {
      if ('ready' in message) this.onReady(slot);
      else this.onResponse(slot, message);
    });
    worker.on('error', (error) => this.onCrash(slot, error));
    worker.on('exit', (code) => {
      if (slot.task) this.onCrash(slot, new Error(`scan worker exited with code ${code}`));
    });
    this.slots.push(slot);
    return slot;
  }

  private startTimer(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = setTimeout(() => this.onTimeout(slot), this.timeoutMs);
  }

  private onReady(slot: Slot): void {
    slot.ready = true;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    if (slot.task) this.startTimer(slot);
  }

  private finish(slot: Slot): Task | null {
    const task = slot.task;
    if (slot.timer) clearTimeout(slot.timer);
    slot.task = null;
    slot.timer = null;
    return task;
  }

  private onResponse(slot: Slot, response: ScanResponse): void {
    const task = this.finish(slot);
    if (!task) return;
    if ('error' in response) task.reject(new Error(response.error));
    else {
      const { occurrences, problems, session, lastRecovery, attempts, priorSession } = response;
      const { digest, dependsOn } = response;
      task.resolve({
        occurrences,
        problems,
        session,
        lastRecovery,
        attempts,
        priorSession,
        digest,
        dependsOn,
      });
    }
    this.pump();
    if (!slot.task) this.idle(slot);
  }

  /** Ends `slot`'s worker once it has had no task for idleMs (the timer a task's start clears). */
  private idle(slot: Slot): void {
    slot.timer = setTimeout(() => this.replace(slot), this.idleMs).unref();
  }

  private onTimeout(slot: Slot): void {
    const task = this.finish(slot);
    this.replace(slot);
    task?.reject(new ScanTimeoutError(this.timeoutMs));
    this.pump();
  }

  private onCrash(slot: Slot, error: Error): void {
    const task = this.finish(slot);
    this.replace(slot);
    task?.reject(error);
    this.pump();
  }

  private replace(slot: Slot): void {
    const index = this.slots.indexOf(slot);
    if (index >= 0) this.slots.splice(index, 1);
    void this.retire(slot);
  }

  private async retire(slot: Slot): Promise<void> {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.worker.removeAllListeners();
    slot.worker.on('error', () => undefined);
    await slot.worker.terminate();
  }
}
