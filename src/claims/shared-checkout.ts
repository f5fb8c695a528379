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

/**
 * `reset`: the paths changed in the checkout besides those that may differ, reset first.
 * `kept`: paths that may differ which the move left as they were, since the tip changed them too:
 * each one's index entry keeps the text its copy was edited from (`fileAt(dir, INDEX, path)`).
 */
export type SyncOutcome =
  | { tip: string; changed: boolean; reset: string[]; kept: string[] }
  | { unreachable: true; reset: string[] };

export class SharedCheckout {
  private tip: string | null = null;

  constructor(
    readonly where: SharedBranch,
    readonly dir: string,
  ) {}

  /**
   * Resets what changed in the checkout besides `mayDiffer` (`beforeReset` told first), fetches,
   * and makes or moves the checkout to the fetched tip. `mayDiffer`: the paths (from the top) an
   * agent of this daemon may have changed (its claimed request, marked done and not yet
   * published): carried over by the move.
   */
  async sync(
    mayDiffer: ReadonlySet<string> = new Set(),
    beforeReset: (paths: string[]) => Promise<void> = async () => undefined,
  ): Promise<SyncOutcome> {
    // Reset before the fetch: a stray write is undone even while the remote is out of reach (the
    // daemon syncs only once it has read the claims, so only when that remote answered).
    const made = await exists(this.dir);
    const changed = made ? await this.changedPaths() : [];
    const reset = changed.filter((path) => !mayDiffer.has(path));
    await beforeReset(reset);
    await this.fromHead(reset);
    const tip = await fetchTip(this.where);
    if (tip === null) return { unreachable: true, reset };
    if (!made) {
      // --force: a checkout deleted by hand is still registered, and git refuses to add it again.
      const add = ['worktree', 'add', '--force', '--quiet', '--detach', this.dir, tip];
      await gitOk(this.where.repo, add);
      this.tip = tip;
      return { tip, changed: true, reset: [], kept: [] };
    }
    if (tip === this.tip) return { tip, changed: false, reset, kept: [] };
    // Read again after the fetch: an agent may have written its copy meanwhile.
    const held = (await this.changedPaths()).filter((path) => mayDiffer.has(path));
    const kept = await this.move(tip, mayDiffer, held);
    this.tip = tip;
    return { tip, changed: true, reset, kept };
  }

  /**
   * The checkout moved to `tip`, the changed copies in `held` carried over. git refuses to move
   * over a changed copy the tip changed too (a human's edit of a claimed request): then the rest
   * is moved path by path, and every path that may differ is left as it is (git's check that a
   * copy is unchanged is not made there), each with the index entry it was edited from, for the
   * done's three-way merge. Gives those paths.
   */
  private async move(
    tip: string,
    mayDiffer: ReadonlySet<string>,
    held: readonly string[],
  ): Promise<string[]> {
    const moved = held.length === 0 ? new Set<string>() : await this.changedTo(tip);
    if (!held.some((path) => moved.has(path))) {
      await gitOk(this.dir, ['checkout', '--quiet', '--detach', tip]);
      return [];
    }
    const head = (await gitOk(this.dir, ['rev-parse', '--verify', 'HEAD'])).trim();
    // HEAD first (from the commit it was read at): were the restore cut short, the next sync
    // resets what it left, to this tip.
    await gitOk(this.dir, ['update-ref', '--no-deref', 'HEAD', tip, head]);
    await this.fromHead([...moved].filter((path) => !mayDiffer.has(path)));
    return [...moved].filter((path) => mayDiffer.has(path));
  }

  /** The paths (from the top) a move from HEAD to `tip` changes, renames as delete and add. */
  private async changedTo(tip: string): Promise<Set<string>> {
    const names = await gitOk(this.dir, ['diff', '--name-only', '--no-renames', '-z', 'HEAD', tip]);
    return new Set(names.split('\0').filter((path) => path !== ''));
  }

  /**
   * The checkout's copies of `paths` (from the top) as its tip has them, index and file. Literal
   * pathspecs: a `*` or `:` in a request's name names that file only.
   */
  async restore(paths: readonly string[]): Promise<void> {
    if (paths.length === 0) return;
    // Its check that the directory is engine's own worktree, before git is run in it.
    await this.changedPaths();
    await this.fromHead(paths);
  }

  private async fromHead(paths: readonly string[]): Promise<void> {
    if (paths.length === 0) return;
    // A path the tip has not is removed; the list goes on stdin, however long it is.
    const args = ['--literal-pathspecs', 'restore', '--quiet', '--source=HEAD', '--staged'];
    const from = ['--worktree', '--pathspec-from-file=-', '--pathspec-file-nul'];
    await gitOk(this.dir, [...args, ...from], { input: paths.join('\0') });
  }

  /** Removes the checkout (its files are the remote's: nothing is lost). */
  async remove(): Promise<void> {
    if (!(await exists(this.dir))) return;
    await this.changedPaths(true);
    await gitOk(this.where.repo, ['worktree', 'remove', '--force', this.dir]);
    this.tip = null;
  }

  /**
   * `git worktree list`, tried again: it fails while another worktree of the repository is being
   * added (an agent's, its `locked` file read mid-add), which cut a sync short under load.
   */
  private async worktreeList(): Promise<string> {
    for (let tries = 1; ; tries++) {
      try {
        return await gitOk(this.where.repo, ['worktree', 'list', '--porcelain', '-z']);
      } catch (error) {
        if (tries === LIST_TRIES) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100 * tries));
      }
    }
  }

  /**
   * The directory must be this repository's worktree at its own top: else git would work in
   * whatever repository encloses it (the human's), a fault to report, never to act on. Gives the
   * paths changed in it, in its index or its files (`strict`: refused when there are any).
   */
  private async changedPaths(strict = false): Promise<string[]> {
    const dir = await realpath(this.dir);
    const list = await this.worktreeList();
    const worktrees = list.split('\0').filter((f) => f.startsWith('worktree '));
    const listed = await Promise.all(
      worktrees.map((f) => realpath(f.slice('worktree '.length)).catch(() => '')),
    );
    const top = await runGit(this.dir, ['rev-parse', '--show-toplevel']);
    if (!listed.includes(dir) || top.code !== 0 || (await realpath(top.stdout.trim())) !== dir) {
      throw new EngineError(`${this.dir} is not engine's checkout of the shared branch`);
    }
    const args = ['status', '--porcelain', '--untracked-files=no', '--no-renames', '-z'];
    const status = await gitOk(this.dir, args);
    // Each entry: two status letters, a space, the path (renames as a delete and an add).
    const changed = status.split('\0').filter((entry) => entry !== '');
    const paths = changed.map((entry) => entry.slice(3));
    if (strict && paths.length > 0) {
      throw new EngineError(
        `${this.dir}, engine's checkout of the shared branch, was changed: ${paths.join(', ')}`,
      );
    }
    return paths;
  }
}

/** How often a sync tries `git worktree list` before it fails. */
const LIST_TRIES = 3;
