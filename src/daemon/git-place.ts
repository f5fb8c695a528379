/**
 * Where a daemon of git claims finds its shared branch (docs/MULTI-HOST.md): the repository of
 * its root, the remote and branch (the remote's default unless given), the place of its own
 * checkout in engine's state directory, and its instance id there.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { checkRemote } from '../claims/claim-refs.js';
import type { Holder } from '../claims/lease.js';
import type { SharedCheckout } from '../claims/shared-checkout.js';
import { EngineError, messageOf } from '../errors.js';
import { fileSlug } from '../files/file-slug.js';
import { runGit } from '../process/run-git.js';
import type { DaemonOptions, LogFn } from './daemon-context.js';
import type { DaemonLock } from './daemon-lock.js';

/** Where the shared branch is, and who this daemon is. */
export interface GitPlace {
  repo: string;
  remote: string;
  branch: string;
  me: Holder;
  checkout: SharedCheckout;
  /** The daemon root's counterpart in the checkout: agents' worktrees are made from there. */
  agentRoot: string;
  /** One daemon per checkout (daemon-lock.ts), released at close. */
  lock: DaemonLock;
}

/** The shared branch a daemon over `options.root` uses, and its checkout's directory. */
export async function findSharedBranch(
  options: DaemonOptions,
  log: LogFn,
): Promise<{ repo: string; remote: string; branch: string; dir: string }> {
  const repo = await repositoryOf(options.root);
  try {
    checkRemote(options.claimsRemote);
  } catch (error) {
    throw new EngineError(`--claims-remote: ${messageOf(error)}`);
  }
  const remote = options.claimsRemote;
  const branch =
    options.claimsBranch ?? (await untilReached(options, log, () => defaultBranch(repo, remote)));
  // A wrong name is said at once, never taken for a remote out of reach.
  if (!(await untilReached(options, log, () => hasBranch(repo, remote, branch))).found)
    throw new EngineError(`--claims-branch: ${remote} has no branch ${branch}`);
  return { repo, remote, branch, dir: checkoutDir(repo, remote, branch) };
}

async function repositoryOf(root: string): Promise<string> {
  const top = await runGit(root, ['rev-parse', '--show-toplevel']);
  if (top.code !== 0) throw new EngineError(`--claims git needs ${root} in a git repository`);
  return realpath(top.stdout.trim());
}

/** The remote's default branch; null when it cannot be reached. */
async function defaultBranch(repo: string, remote: string): Promise<string | null> {
  const run = await runGit(repo, ['ls-remote', '--symref', remote, 'HEAD']);
  if (run.code !== 0) return null;
  const match = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(run.stdout);
  if (!match) throw new EngineError(`${remote} names no default branch: give --claims-branch`);
  return match[1]!;
}

/** Whether the remote has the branch; null when it cannot be reached. */
async function hasBranch(
  repo: string,
  remote: string,
  branch: string,
): Promise<{ found: boolean } | null> {
  const run = await runGit(repo, ['ls-remote', '--heads', remote, `refs/heads/${branch}`]);
  if (run.code !== 0) return null;
  return { found: run.stdout.trim() !== '' };
}

/** Asks until the remote answers (`ask` gives non-null), saying so in the log once meanwhile. */
export async function untilReached<T>(
  options: DaemonOptions,
  log: LogFn,
  ask: () => Promise<T | null>,
): Promise<T> {
  for (let tries = 0; ; tries++) {
    const answer = await ask();
    if (answer !== null) return answer;
    if (tries === 0) log('warn', `claims: ${options.claimsRemote} cannot be reached; trying again`);
    await new Promise((resolve) => setTimeout(resolve, options.claimsFetchMs));
  }
}

/**
 * This daemon's instance id: one per boot and checkout, kept beside the checkout, so that a
 * daemon restarted on the same boot knows its earlier leases as its own (`mine`) and adopts
 * them. Two daemons never share it: the checkout is per repository, remote and branch, and its
 * lock (acquireCheckoutLock, taken before this) keeps one daemon per checkout.
 */
export async function instanceOf(checkout: string, boot: string): Promise<string> {
  const file = `${checkout}.instance`;
  const kept = await readFile(file, 'utf8').catch(() => '');
  const [keptBoot, instance] = kept.trim().split(' ');
  if (keptBoot === boot && instance && /^[0-9a-f]{16}$/.test(instance)) return instance;
  const made = randomBytes(8).toString('hex');
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${boot} ${made}\n`);
  return made;
}

/**
 * The checkout's place: in engine's state directory, outside the human's tree and outside any
 * directory the watch skips (IGNORE_RULES: a checkout under `.git` would never be watched).
 */
function checkoutDir(repo: string, remote: string, branch: string): string {
  const hash = createHash('sha256').update(`${repo}\0${remote}\0${branch}`).digest('hex');
  return join(checkoutsDir(process.env), `${fileSlug(basename(repo))}-${hash.slice(0, 16)}`);
}

/** Where every checkout of this user is made, its agents' worktrees inside each. */
export function checkoutsDir(env: NodeJS.ProcessEnv): string {
  const state = env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state');
  return join(state, 'engine', 'checkouts');
}
