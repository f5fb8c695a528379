/**
 * The claim store seam (src/daemon/claim-store.ts), in-process with a fake runner: the launch
 * claims through the context's store, and an item another host holds waits as `elsewhere(host)`
 * without a slot, so the next item takes it.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { localClaimStore, type ClaimStore } from '../../src/daemon/claim-store.js';
import { Daemon } from '../../src/daemon/daemon.js';
import type { AgentLaunch, Runner } from '../../src/runners/runner.js';
import { inProcessContext } from '../helpers/in-process-context.js';
import { fakeProbe } from '../process/fake-probe.js';
import { waitFor } from '../helpers/wait-for.js';
import { TEST_TAGS_MD } from '../helpers/daemon-harness.js';
import { craftClaim, craftedState } from '../helpers/crafted-state.js';
import { git } from '../helpers/git.js';
import { runCli } from '../helpers/run-cli.js';

const roots: string[] = [];
afterEach(async () => {
  for (const dir of roots.splice(0)) await rm(dir, { recursive: true, force: true });
});

const FIX = { noun: 'fix', skill: '/fix', mode: 'agent', priority: 3, dispatchable: true };

async function daemonWith(claims: ClaimStore, maxAgents: number, reapIntervalMs = 30_000) {
  const root = await mkdtemp(join(tmpdir(), 'engine-claim-store-'));
  roots.push(root);
  await mkdir(join(root, 'sessions'));
  const launched: string[] = [];
  const lines: string[] = [];
  const runner = {
    kind: 'tmux',
    launch: async (request: AgentLaunch) => {
      launched.push(request.env.ENGINE_REQUEST_FILE?.split('/').pop() ?? '');
      return { pid: 1, windowName: request.name, target: '%1' };
    },
    close: async () => undefined,
  } as unknown as Runner;
  const ctx = inProcessContext(root, {
    options: { maxAgents, reapIntervalMs },
    log: (_level, message) => lines.push(message),
    routes: {
      route: (noun) => (noun === 'fix' ? FIX : null),
      cap: () => undefined,
      watch: () => undefined,
      close: async () => undefined,
    },
    runner,
    now: () => new Date(Date.now() + 3600_000),
    probe: fakeProbe(),
    claims,
  });
  return { root, daemon: new Daemon(ctx), launched, lines };
}

describe('the claim store seam', () => {
  it('claims through the store; an item held by another host waits elsewhere, with no slot', async () => {
    const asked: string[] = [];
    const claims: ClaimStore = {
      ...localClaimStore,
      claim: async (item, session) => {
        asked.push(item.file.split('/').pop() ?? '');
        if (item.file.endsWith('A.md')) return { kind: 'elsewhere', host: 'build-box' };
        return localClaimStore.claim(item, session);
      },
    };
    const { root, daemon, launched, lines } = await daemonWith(claims, 1);
    await writeFile(join(root, 'sessions', 'A.md'), '# A\n**Tags**: #delegated-fix #P0\n');
    await writeFile(join(root, 'sessions', 'B.md'), '# B\n**Tags**: #delegated-fix\n');
    await daemon.runOnce();
    await daemon.stop();
    expect(asked).toEqual(['A.md', 'B.md']);
    expect(launched).toEqual(['B.md']);
    expect(lines.some((l) => /A\.md #fix: launching → elsewhere\(build-box\)/.test(l))).toBe(true);
    // Written by the store only: A is still approved here, B claimed.
    expect(await readFile(join(root, 'sessions', 'A.md'), 'utf8')).toContain('#delegated-fix');
    expect(await readFile(join(root, 'sessions', 'B.md'), 'utf8')).toContain('#claimed-fix');
  });

  it('lets the store go of a session once its claim ended as its file says', async () => {
    const ended: string[] = [];
    const claims: ClaimStore = {
      ...localClaimStore,
      followEnded: async (session) => void ended.push(session),
    };
    const { root, daemon, launched, lines } = await daemonWith(claims, 1);
    const file = join(root, 'sessions', 'A.md');
    await writeFile(file, '# A\n**Tags**: #delegated-fix\n');
    await daemon.start();
    try {
      await waitFor(() => launched.length === 1, { message: () => lines.join('\n') });
      const text = await readFile(file, 'utf8');
      const session = /\*\*Session\*\*: (\S+)/.exec(text)?.[1];
      expect(ended).toEqual([]);
      // A read while git rewrites the file (its claim not shown for a moment) ends nothing.
      await writeFile(file, text.replace('#claimed-fix', ''));
      await waitFor(() => lines.some((l) => /A\.md no longer shows its claim/.test(l)), {
        message: () => lines.join('\n'),
      });
      await writeFile(file, text);
      expect(ended).toEqual([]);
      await writeFile(file, text.replace('#claimed-fix', '#done-fix'));
      await waitFor(() => ended.length > 0, { message: () => lines.join('\n') });
      expect(ended).toEqual([session]);
    } finally {
      await daemon.stop();
    }
  });

  it('marks superseded a session open at start that no claim names, once the store says its item moved on', async () => {
    const asked: string[] = [];
    const claims: ClaimStore = {
      ...localClaimStore,
      // Another host holds both items: nothing here adopts either session.
      judgeHolder: async () => ({ kind: 'elsewhere', host: 'b' }),
      movedOn: async ({ session }) => {
        asked.push(session);
        return "its item's lease is held by b as attempt 2";
      },
    };
    // Closed when found superseded at two reaps in a row.
    const { root, daemon, lines } = await daemonWith(claims, 1, 100);
    // A names its session still: the claim check owns it. B names another session now.
    const sessions = {
      A: 'sessions/2026_01_01_000000_FIX_A',
      B: 'sessions/2026_01_01_000000_FIX_B',
    };
    for (const [name, ref] of Object.entries(sessions)) {
      const file = await craftClaim(root, `${name}.md`, ref, null);
      await writeFile(
        join(root, ref, '.state.json'),
        JSON.stringify(craftedState(root, file, ref, {})),
      );
    }
    const b = join(root, 'sessions', 'B.md');
    await writeFile(b, (await readFile(b, 'utf8')).replace(sessions.B, 'sessions/other'));
    await daemon.start();
    try {
      await waitFor(() => existsSync(join(root, sessions.B, '.superseded')), {
        message: () => lines.join('\n'),
      });
    } finally {
      await daemon.stop();
    }
    expect(existsSync(join(root, sessions.A, '.superseded'))).toBe(false);
    expect(new Set(asked)).toEqual(new Set([sessions.B]));
    expect(asked.length).toBeGreaterThanOrEqual(2);
    expect(lines).toContain(
      `${sessions.B}: its item's lease is held by b as attempt 2, so its work cannot count: its agent is closed (its worktree and branch stay)`,
    );
  });

  it('parks an item whose claim could not reach the store, and claims it when tried again', async () => {
    let calls = 0;
    const claims: ClaimStore = {
      ...localClaimStore,
      claim: async (item, session) => {
        calls += 1;
        if (calls === 1)
          return { kind: 'failed', message: 'unreachable', retryAt: Date.now() + 3600_000 + 200 };
        return localClaimStore.claim(item, session);
      },
    };
    const { root, daemon, launched, lines } = await daemonWith(claims, 1);
    await writeFile(join(root, 'sessions', 'A.md'), '# A\n**Tags**: #delegated-fix\n');
    await daemon.start();
    try {
      await waitFor(() => launched.length === 1, { message: () => lines.join('\n') });
    } finally {
      await daemon.stop();
    }
    expect(calls).toBe(2);
    expect(lines.some((l) => /A\.md #fix: launching → parked\(not-before/.test(l))).toBe(true);
    expect(lines).toContain(
      `could not claim ${join(root, 'sessions', 'A.md')} (#delegated-fix): unreachable`,
    );
  });

  it('refuses --claims git with --once, outside a git repository, and with a remote that is no name', async () => {
    const root = await mkdtemp(join(tmpdir(), 'engine-claim-store-'));
    roots.push(root);
    await mkdir(join(root, 'directives'));
    await mkdir(join(root, 'sessions'));
    await writeFile(join(root, 'directives', 'TAGS.md'), TEST_TAGS_MD);
    const run = (...flags: string[]) =>
      runCli(
        [
          'run',
          '--monitor-tags',
          '--root',
          root,
          '--agent-cmd',
          'true',
          '--claims',
          'git',
          ...flags,
        ],
        {
          env: { ...process.env, XDG_STATE_HOME: join(root, 'state'), ENGINE_NOTIFY_VIA: 'none' },
        },
      );
    const once = await run('--once');
    expect(once.code).not.toBe(0);
    expect(once.stderr).toMatch(/--once goes with local claims/);
    const plain = await run('--runner', 'pty');
    expect(plain.code).not.toBe(0);
    expect(plain.stderr).toMatch(/--claims git needs .* in a git repository/);
    git(root, 'init', '--quiet');
    const named = await run('--runner', 'pty', '--claims-remote', '../elsewhere');
    expect(named.code).not.toBe(0);
    expect(named.stderr).toMatch(/--claims-remote: not a remote name/);
    git(root, 'commit', '--quiet', '--allow-empty', '-m', 'seed');
    git(root, 'remote', 'add', 'origin', root);
    const branch = await run('--runner', 'pty', '--claims-branch', 'no-such-branch');
    expect(branch.code).not.toBe(0);
    expect(branch.stderr).toMatch(/--claims-branch: origin has no branch no-such-branch/);
  });
});
