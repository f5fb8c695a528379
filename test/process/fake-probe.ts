/** An injectable ProcProbe for unit tests, and a stat-line builder. Not a test file itself. */
import type { ProcProbe } from '../../src/process/proc-probe.js';

/** A stat line as the kernel writes it (52 fields), with the fields we read set. */
export function statLine(pid: number, comm: string, state: string, startTicks: string): string {
  const after = [state, ...Array.from({ length: 49 }, (_, i) => String(i + 4))];
  after[22 - 3] = startTicks;
  return `${pid} (${comm}) ${after.join(' ')}\n`;
}

export const BOOT = '11111111-2222-3333-4444-555555555555';
export const HOST = 'build-1';

export interface FakeProbe extends ProcProbe {
  /** Every pid kill0 was asked about. */
  kill0Calls: number[];
  /** Every pid readStat was asked about. */
  statCalls: number[];
}

/**
 * `stats[pid]` is the stat text (a list is answered one entry per call, the last one repeating);
 * `kill0s[pid]` defaults to 'missing'.
 */
export function fakeProbe(
  options: {
    stats?: Record<number, string | null | (string | null)[]>;
    kill0s?: Record<number, 'exists' | 'missing' | 'eperm'>;
    bootId?: string;
    host?: string;
  } = {},
): FakeProbe {
  const kill0Calls: number[] = [];
  const statCalls: number[] = [];
  const statAt = (pid: number, call: number): string | null => {
    const entry = options.stats?.[pid];
    if (Array.isArray(entry)) return entry[Math.min(call, entry.length - 1)] ?? null;
    return entry ?? null;
  };
  return {
    kill0Calls,
    statCalls,
    readStat(pid) {
      const call = statCalls.filter((p) => p === pid).length;
      statCalls.push(pid);
      return statAt(pid, call);
    },
    bootId: () => options.bootId ?? BOOT,
    hostname: () => options.host ?? HOST,
    kill0(pid) {
      kill0Calls.push(pid);
      return options.kill0s?.[pid] ?? 'missing';
    },
  };
}
