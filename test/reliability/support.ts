/**
 * Shared pieces of the reliability suite (test/reliability): the torture switch, figure
 * recording for docs/RELIABILITY.md and the short intervals its daemons run with. The daemon,
 * its root and the request-file helpers are test/helpers/daemon-harness.ts. Not a test file.
 */
import { appendFileSync } from 'node:fs';

/** `npm run test:torture` sets ENGINE_TORTURE=1: more rounds, more files, longer runs. */
export const TORTURE = process.env.ENGINE_TORTURE === '1';

/** Picks the default-profile or the torture-profile size of a run. */
export function scale(normal: number, torture: number): number {
  return TORTURE ? torture : normal;
}

/**
 * Records a measured figure. With ENGINE_RELIABILITY_FIGURES=<file>, appends one JSON line
 * there (docs/RELIABILITY.md is written from those lines); otherwise does nothing.
 */
export function recordFigure(name: string, figure: Record<string, unknown>): void {
  const file = process.env.ENGINE_RELIABILITY_FIGURES;
  if (!file) return;
  appendFileSync(
    file,
    `${JSON.stringify({ name, torture: TORTURE, ...figure, at: new Date().toISOString() })}\n`,
  );
}

/**
 * Short intervals, so crashes, grace periods and reaps play out in seconds: the flags every
 * reliability daemon starts with. The grace period is 4 s, not 1 s: on a loaded 2-core machine a
 * wrapper needs over a second to record its pid, and a shorter grace requeues healthy starts.
 */
export const FAST = [
  '--claim-grace-ms',
  '4000',
  '--reap-interval-ms',
  '300',
  '--debounce-ms',
  '200',
  '--rescan-interval-ms',
  '1000',
];

/** Counts of a key over a list. */
export function countBy<T>(list: T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of list) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}
