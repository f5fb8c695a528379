/**
 * A DaemonContext for in-process daemon tests: the options the daemon would have by default over
 * `root` (no watch), a real clock, timers and process probe, scanning on this thread, and no
 * routes, runner, log or event log until a test gives its own.
 */
import { join } from 'node:path';
import type {
  DaemonContext,
  DaemonOptions,
  DispatchRoutes,
} from '../../src/daemon/daemon-context.js';
import { readRequestFile } from '../../src/files/read-text-file.js';
import { systemProbe } from '../../src/process/process-identity.js';
import type { Runner } from '../../src/runners/runner.js';
import { summaryOf } from '../../src/tags/scan-pool.js';
import { scanTags } from '../../src/tags/scan-tags.js';

export function inProcessContext(
  root: string,
  {
    options,
    ...over
  }: Partial<Omit<DaemonContext, 'options'>> & {
    options?: Partial<DaemonOptions>;
  } = {},
): DaemonContext {
  return {
    options: {
      root,
      paths: [join(root, 'sessions')],
      monitor: ['#delegated-*'],
      debounceMs: 0,
      watch: false,
      watcher: 'parcel',
      rescanIntervalMs: 60_000,
      reapIntervalMs: 30_000,
      claimGraceMs: 60_000,
      staleAfterMs: 45 * 60_000,
      closeAfterDoneMs: 0,
      maxAgents: 0,
      agingMs: 0,
      agent: 'custom',
      agentTemplate: ['true'],
      claudeBin: null,
      runner: 'tmux',
      tmuxSocket: null,
      tmuxSession: 'dispatch',
      heartbeatMs: 1000,
      pollMs: 1000,
      retries: 0,
      retryBackoffMs: 60_000,
      limitBackoffMs: 15 * 60_000,
      worktree: false,
      claims: 'local',
      claimsRemote: 'origin',
      claimsBranch: null,
      claimsFetchMs: 5000,
      claimsLeaseMs: 60_000,
      ...options,
    },
    routes: {} as DispatchRoutes,
    runner: {} as Runner,
    log: () => undefined,
    now: () => new Date(),
    timers: { setTimeout: (callback, ms) => setTimeout(callback, ms), clearTimeout },
    probe: systemProbe,
    recordEvent: async () => undefined,
    scan: async (text) => summaryOf(scanTags(text), text),
    readRequest: readRequestFile,
    ...over,
  };
}
