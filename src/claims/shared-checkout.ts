/**
 * The daemon's own checkout of the shared branch, as last fetched: a detached git worktree that
 * only fetches move, so the daemon reads the queue from the shared branch with its usual
 * watch-and-read stages and never from, or into, the human's working tree. The daemon never
 * edits it: its writes go to the remote (shared-branch.ts) and come back with the next fetch.
 * Only an agent of a held lease may change its request here; any other change (a late write
 * after the lease ended) is reset from the tip at the next sync, and named in `reset`.
 */
import { realpath } from 'node:fs/promises';
import { EngineError } from '../errors.js';
import { gitOk, runGit } from '../process/run-git.js';
import { fetchTip, type SharedBranch } from './shared-branch.js';
import { pathExists as exists } from '../files/path-exists.js';

/** `reset`: the paths changed in the checkout besides those that may differ, reset first. */
export type SyncOutcome =
  { tip: string; changed: boolean; reset: string[] } | { unreachable: true; reset: string[] };

export class SharedCheckout {
  private tip: string | null = null;

  constructor(
    readonly where: SharedBranch,
    readonly dir: string,
  ) {}

  /**
   * Resets what changed in the checkout besides `mayDiffer`, fetches, and makes or moves the
   * checkout to the fetched tip. `mayDiffer`: the paths (from
   * the top) an agent of this daemon may have changed (its claimed request, marked done and not
   * yet published): carried over by the move, which git refuses when the tip changed them too.
   */
  async sync(mayDiffer: ReadonlySet<string> = new Set()): Promise<SyncOutcome> {
    // Reset before the fetch: a stray write is undone even while the remote is out of reach.
    const made = await exists(this.dir);
    const reset = made ? await this.checkOwn(mayDiffer) : [];
    await this.restore(reset);
    const tip = await fetchTip(this.where);
    if (tip === null) return { unreachable: true, reset };
    if (!made) {
      // --force: a checkout deleted by hand is still registered, and git refuses to add it again.
      const add = ['worktree', 'add', '--force', '--quiet', '--detach', this.dir, tip];
      await gitOk(this.where.repo, add);
      this.tip = tip;
      return { tip, changed: true, reset: [] };
    }
    if (tip === this.tip) return { tip, changed: false, reset };
    await gitOk(this.dir, ['checkout', '--quiet', '--detach', tip]);
    this.tip = tip;
    return { tip, changed: true, reset };
  }

  /**
   * The checkout's copies of `paths` (from the top) as its tip has them. Literal pathspecs: a
   * `*` or `:` in a request's name names that file only.
   */
  async restore(paths: readonly string[]): Promise<void> {
    if (paths.length === 0) return;
    await this.checkOwn(new Set(paths));
    await gitOk(this.dir, ['--literal-pathspecs', 'checkout', '--quiet', '--', ...paths]);
  }

  /** Removes the checkout (its files are the remote's: nothing is lost). */
  async remove(): Promise<void> {
    if (!(await exists(this.dir))) return;
    await this.checkOwn(new Set(), true);
    await gitOk(this.where.repo, ['worktree', 'remove', '--force', this.dir]);
    this.tip = null;
  }

  /**
   * The directory must be this repository's worktree at its own top: else git would work in
   * whatever repository encloses it (the human's), a fault to report, never to act on. Gives the
   * paths changed in it besides `mayDiffer` (`strict`: refused when there are any).
   */
  private async checkOwn(mayDiffer: ReadonlySet<string>, strict = false): Promise<string[]> {
    const dir = await realpath(this.dir);
    const list = await gitOk(this.where.repo, ['worktree', 'list', '--porcelain', '-z']);
    const worktrees = list.split('\0').filter((f) => f.startsWith('worktree '));
    const listed = await Promise.all(
      worktrees.map((f) => realpath(f.slice('worktree '.length)).catch(() => '')),
    );
    const top = await runGit(this.dir, ['rev-parse', '--show-toplevel']);
    if (!listed.includes(dir) || top.code !== 0 || (await realpath(top.stdout.trim())) !== dir) {
      throw new EngineError(`${this.dir} is not engine's checkout of the shared branch`);
    }
    const status = await gitOk(this.dir, ['status', '--porcelain', '--untracked-files=no', '-z']);
    // Each entry: two status letters, a space, the path (a rename's source follows: never ours).
    const changed = status.split('\0').filter((entry) => entry !== '');
    const unexpected = changed.map((entry) => entry.slice(3)).filter((p) => !mayDiffer.has(p));
    if (strict && unexpected.length > 0) {
      throw new EngineError(
        `${this.dir}, engine's checkout of the shared branch, was changed: ${unexpected.join(', ')}`,
      );
    }
    return unexpected;
  }
}
