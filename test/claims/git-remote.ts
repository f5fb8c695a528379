/** A shared remote for the many-hosts tests: a bare repository and clones of it, as hosts. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import { GitClaimStore } from '../../src/claims/git-claim-store.js';
import type { Holder } from '../../src/claims/lease.js';
import { git } from '../helpers/git.js';

export interface SharedRemote {
  dir: string;
  bare: string;
  /** A new clone of the remote, as one host; its remote is `origin`. */
  host(name: string): string;
  git(cwd: string, ...args: string[]): string;
  cleanup(): void;
}

/** `files`: the seed commit's files (path → text) beside a README. */
export function sharedRemote(files: Record<string, string> = {}): SharedRemote {
  const dir = mkdtempSync(join(tmpdir(), 'engine-claims-'));
  const bare = join(dir, 'remote.git');
  git(dir, 'init', '--quiet', '--bare', '--initial-branch=main', bare);
  const seed = join(dir, 'seed');
  mkdirSync(seed);
  git(seed, 'init', '--quiet', '--initial-branch=main');
  writeFileSync(join(seed, 'README.md'), '# shared\n');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(seed, path)), { recursive: true });
    writeFileSync(join(seed, path), text);
  }
  git(seed, 'add', '.');
  git(seed, 'commit', '--quiet', '-m', 'seed');
  git(seed, 'push', '--quiet', bare, 'main');
  return {
    dir,
    bare,
    host(name) {
      const clone = join(dir, name);
      git(dir, 'clone', '--quiet', bare, clone);
      return clone;
    },
    git,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** `holder` claims `item` (`sessions/<item>.md`, noun fix) from a clone of its own. */
export async function claimFrom(
  remote: SharedRemote,
  holder: Holder,
  item: string,
  branch?: string,
): Promise<void> {
  const store = new GitClaimStore({
    repo: remote.host(`${holder.host}-${item}`),
    remote: 'origin',
    branch: 'main',
    me: holder,
    leaseMs: 60_000,
  });
  expect((await store.claim(item, `sessions/${item}.md`, 'fix', branch)).won).toBe(true);
}

/**
 * Pushes `clone`'s main to the remote as a fast-forward, never forced, rebasing over the pushes
 * that came first (the daemons'), as a human would.
 */
export function pushRebasing(shared: SharedRemote, clone: string): void {
  for (let tries = 1; ; tries++) {
    try {
      shared.git(clone, 'push', '--quiet', 'origin', 'main');
      return;
    } catch (error) {
      if (tries >= 30) throw error;
      shared.git(clone, 'pull', '--quiet', '--rebase', 'origin', 'main');
    }
  }
}

/** The remote's pre-receive hook runs `script` (sh) before it takes each push. */
export function preReceive(shared: SharedRemote, script: string): void {
  writeFileSync(join(shared.bare, 'hooks', 'pre-receive'), `#!/bin/sh\n${script}\n`, {
    mode: 0o755,
  });
}
