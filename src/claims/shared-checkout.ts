/**
 * The daemon's own checkout of the shared branch, as last fetched: a detached git worktree that
 * only fetches move, so the daemon reads the queue from the shared branch with its usual
 * watch-and-read stages and never from, or into, the human's working tree. The daemon never
 * edits it: its writes go to the remote (shared-branch.ts) and come back with the next fetch.
 */
import { stat } from 'node:fs/promises';
import { gitOk, runGit } from '../process/run-git.js';
import { fetchTip, type SharedBranch } from './shared-branch.js';

export type SyncOutcome = { tip: string; changed: boolean } | { unreachable: true };

export class SharedCheckout {
  private tip: string | null = null;

  constructor(
    private readonly where: SharedBranch,
    readonly dir: string,
  ) {}

  /** Fetches, and makes or moves the checkout to the fetched tip. */
  async sync(): Promise<SyncOutcome> {
    const tip = await fetchTip(this.where);
    if (tip === null) return { unreachable: true };
    if (tip === this.tip) return { tip, changed: false };
    if (await exists(this.dir)) {
      // No --force: the checkout is engine's alone, so a change in it is a fault to report,
      // never something to overwrite.
      await gitOk(this.dir, ['checkout', '--quiet', '--detach', tip]);
    } else {
      await gitOk(this.where.repo, ['worktree', 'add', '--quiet', '--detach', this.dir, tip]);
    }
    this.tip = tip;
    return { tip, changed: true };
  }

  /** Removes the checkout (its files are the remote's: nothing is lost). */
  async remove(): Promise<void> {
    if (!(await exists(this.dir))) return;
    await runGit(this.where.repo, ['worktree', 'remove', '--force', this.dir]);
    this.tip = null;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
