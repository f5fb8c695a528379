/**
 * `find`'s prefilter over whole trees, on every core: the main thread and the workers take
 * units (a directory, or a batch of files) from one queue, so trees of any shape are shared out
 * as they are discovered. A small tree is done by the main thread before a worker is up. The
 * main thread scans the few files a worker's unit kept (prefilter-unit.ts, workerResult).
 */
import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { BoundedReader } from './bounded-reader.js';
import {
  runUnit,
  scanRead,
  type PrefilterUnit,
  type PrefilterWorkerData,
  type UnitRead,
  type UnitResult,
} from './prefilter-unit.js';
import { startWorker } from './start-worker.js';

export interface PrefilterOptions {
  /** Threads in all, the main thread included; default: the number of cores, at most 4. */
  threads?: number;
  /**
   * Whether the main thread reads units too (default); false leaves every unit to the workers,
   * started at once (tests: each unit read in a worker), unless all are lost.
   */
  inline?: boolean;
  /** Whether candidates the fast path read keep their text (prefilter-unit.ts); default yes. */
  texts?: boolean;
}

interface Helper {
  worker: Worker;
  ready: boolean;
  /** Units sent and not yet answered, oldest first (a worker answers in order). */
  units: PrefilterUnit[];
}

/**
 * Units sent ahead to each worker. With one, a worker idled while its result waited for the main
 * thread to finish its own unit (half its time at 50,000 files); the next one is already there.
 */
const IN_FLIGHT = 3;

/** Yields each unit's result; pausing the consumer pauses the walk. */
export async function* prefilterTree(
  paths: string[],
  needle: Buffer,
  options: PrefilterOptions = {},
): AsyncGenerator<UnitResult> {
  const queue = initialUnits(paths);
  const reader = new BoundedReader(needle);
  /** Workers' results; a read not yet scanned is scanned as the consumer takes it. */
  const finished: Array<UnitRead | UnitResult> = [];
  let helpers: Helper[] = [];
  let wake: (() => void) | null = null;
  const notify = (): void => {
    wake?.();
    wake = null;
  };
  const dispatch = (): void => {
    // Results wait while the consumer is paused: a few per worker pile up at most.
    if (finished.length > 2 * helpers.length) return;
    for (const helper of helpers) {
      while (helper.ready && helper.units.length < IN_FLIGHT && queue.length > 0) {
        const unit = queue.pop() as PrefilterUnit;
        helper.units.push(unit);
        helper.worker.postMessage(unit);
      }
    }
  };
  // A worker that fails gives its units back; the main thread runs them and meets the same error.
  const lose = (helper: Helper): void => {
    queue.push(...helper.units);
    helper.units = [];
    helpers = helpers.filter((h) => h !== helper);
    void helper.worker.terminate();
    notify();
  };

  const threads = options.threads ?? Math.min(4, availableParallelism());
  const texts = options.texts ?? true;
  let started = false;
  // Workers start once there is work to share: one small directory never pays for a thread.
  const startHelpers = (): void => {
    started = true;
    for (let i = 1; i < threads; i++) {
      const helper: Helper = {
        worker: startWorker('prefilter-worker', {
          workerData: { needle, texts } satisfies PrefilterWorkerData,
        }),
        ready: false,
        units: [],
      };
      helper.worker.on('message', (message: UnitRead | UnitResult | { ready: true }) => {
        if ('ready' in message) helper.ready = true;
        else {
          helper.units.shift();
          queue.push(...message.units);
          finished.push(message);
        }
        dispatch();
        notify();
      });
      helper.worker.on('error', () => lose(helper));
      helper.worker.on('exit', () => lose(helper));
      helpers.push(helper);
    }
  };

  try {
    for (;;) {
      if (!started && (queue.length >= 2 || options.inline === false)) startHelpers();
      dispatch();
      const fromWorker = finished.shift();
      if (fromWorker) {
        yield 'held' in fromWorker ? scanRead(fromWorker, texts) : fromWorker;
        continue;
      }
      const inline = readsOnMainThread(options.inline, helpers.length);
      const unit = inline ? queue.pop() : undefined;
      if (unit) {
        const result = runUnit(unit, reader, texts);
        queue.push(...result.units);
        yield result;
        // Let the workers' results and the scan pool's replies in.
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      if (queue.length === 0 && helpers.every((h) => h.units.length === 0)) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    const stopping = helpers;
    helpers = [];
    await Promise.all(stopping.map((h) => h.worker.terminate()));
  }
}

/**
 * Whether the main thread reads the next unit itself (PrefilterOptions.inline), given how many
 * workers it has. Without one (none started, or all lost) it always does. On 2 cores too: the
 * main thread reading beside its worker, with the scan of the worker's few held files moved to
 * it (prefilter-unit.ts), made `find` over 50,000 files about a quarter faster in wall time
 * (docs/BENCHMARKS.md).
 */
export function readsOnMainThread(inline: boolean | undefined, workers: number): boolean {
  return workers === 0 || (inline ?? true);
}

function initialUnits(paths: string[]): PrefilterUnit[] {
  const units: PrefilterUnit[] = [];
  for (const path of paths) {
    let info;
    try {
      info = statSync(path);
    } catch {
      // A listed name that is not UTF-8 (U+FFFD in it, the daemon's index passes such names):
      // reading it says so.
      if (path.includes('\uFFFD')) units.push({ kind: 'files', paths: [path] });
      continue;
    }
    units.push(info.isFile() ? { kind: 'files', paths: [path] } : { kind: 'directory', path });
  }
  return units.reverse();
}
