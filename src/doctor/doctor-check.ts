/**
 * `engine doctor`'s checks: each reads the world through a `DoctorProbe` (so a unit test can make
 * it fail without changing the machine) and answers one `CheckResult`. Which statuses fail the
 * command is decided here, once.
 */
import type { AgentKind } from '../agents/agent-profile.js';
import type { ProcessIdentity } from '../process/process-identity.js';
import type { Liveness } from '../process/process-identity.js';
import type { Settings } from '../settings/setting-table.js';

/**
 * PASS: nothing to do. WARN: works, but may stop or surprise an unattended run. FAIL: engine or
 * its agent will not work until it is fixed. SKIP: the check does not apply to this set-up.
 */
export type CheckStatus = 'PASS' | 'WARN' | 'FAIL' | 'SKIP';

export interface CheckResult {
  id: string;
  status: CheckStatus;
  summary: string;
  /** One line that fixes it; empty for PASS and SKIP. */
  fix: string;
}

/** What a run of a program gave: its stdout when it exited 0, else why not. */
export type RunOutcome = { ok: true; stdout: string } | { ok: false; reason: string };

/**
 * A test push of a ref in engine's namespace (claims-remote.ts).
 * - `accepted`: pushed and deleted.
 * - `left`: pushed, but the delete was not taken: the ref stays on the remote.
 * - `refused`: the remote answered, and did not take the push.
 * - `unreachable`: git could not talk to the remote.
 * - `no-clone`, `no-remote`: nothing to push from, or to.
 */
export type RefPushOutcome =
  | {
      kind: 'accepted' | 'left' | 'hidden' | 'refused' | 'unreachable';
      ref: string;
      message: string;
    }
  | { kind: 'no-clone' | 'no-remote'; message: string };

/** Everything a check reads from the machine. */
export interface DoctorProbe {
  nodeVersion: string;
  /** package.json's `engines.node`, such as `>=20.19`. */
  nodeRange: string;
  platform: NodeJS.Platform;
  uid: number;
  home: string;
  /** Null when the file does not exist; throws, naming the path, when it cannot be read. */
  readText(path: string): Promise<string | null>;
  findProgram(program: string, path: string): string | null;
  run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<RunOutcome>;
  /** inotify watches the watcher needs for `paths` (one per directory; chokidar: per file too). */
  watchesNeeded(paths: string[], watcher: Settings['watcher']): Promise<number>;
  liveness(holder: ProcessIdentity): Liveness;
  /** Whether a Unix socket accepts a connection; null when no file is there. */
  socketAnswers(path: string): Promise<boolean | null>;
  /** Writes and removes a file in `dir`: the clock just before, its mtime, the clock just after. */
  writeStamp(dir: string): Promise<{ before: number; mtime: number; after: number }>;
  /** Pushes a ref of engine's namespace to `remote` of the clone at `dir`, and deletes it. */
  pushTestRefs(dir: string, remote: string): Promise<RefPushOutcome>;
}

/** The project's §TAG_DISPATCH as the commands read it, or why it could not be read. */
export type TableRead = { path: string; text: string; shipped: boolean } | { error: string };

/** The agent the daemon would start. */
export interface AgentLaunch {
  kind: AgentKind;
  program: string;
  /**
   * How Claude Code is started (its arguments besides the prompt and engine's own), when the agent
   * is Claude Code: a Claude profile, or a custom command whose program is `claude`; else null.
   */
  claude: { print: boolean; args: string[] } | null;
}

export interface DoctorContext {
  /** null: not in an engine project; the project checks then fail or skip. */
  root: string | null;
  env: NodeJS.ProcessEnv;
  /** As the daemon resolves them; the defaults (and the environment) when they cannot be read. */
  settings: Settings;
  /** Why the settings could not be read, or null. */
  settingsError: string | null;
  agent: AgentLaunch;
  table: TableRead | null;
  probe: DoctorProbe;
}

export const pass = (id: string, summary: string): CheckResult => ({
  id,
  status: 'PASS',
  summary,
  fix: '',
});
export const skip = (id: string, summary: string): CheckResult => ({
  id,
  status: 'SKIP',
  summary,
  fix: '',
});
export const warn = (id: string, summary: string, fix: string): CheckResult => ({
  id,
  status: 'WARN',
  summary,
  fix,
});
export const fail = (id: string, summary: string, fix: string): CheckResult => ({
  id,
  status: 'FAIL',
  summary,
  fix,
});

/** The command's exit code: 1 when any check FAILs; a WARN alone leaves it 0. */
export function doctorExitCode(results: readonly CheckResult[]): number {
  return results.some((r) => r.status === 'FAIL') ? 1 : 0;
}

/** `a.b.c` (any number of parts, trailing letters ignored) compared part by part. */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string): number[] => v.split('.').map((p) => Number.parseInt(p, 10) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
