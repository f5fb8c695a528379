import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { watchHeadroom } from '../../src/watch/watch-headroom.js';
import { useDaemonHarness, waitForReady, waitForState } from '../helpers/daemon-harness.js';
import { CLI, runCli } from '../helpers/run-cli.js';
import { craftedState } from '../helpers/crafted-state.js';
import { waitFor } from '../helpers/wait-for.js';

/** A fresh project root: a directory with directives/engine.json. */
async function project(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'engine-attach-'));
  await mkdir(join(dir, 'directives'));
  await writeFile(join(dir, 'directives', 'engine.json'), '{}\n');
  return dir;
}

describe('engine attach', () => {
  const h = useDaemonHarness();

  it("attaches a terminal to the agent's own tmux window", async () => {
    const pty = await import('node-pty').catch(() => null);
    if (!pty) return; // node-pty is optional; the runner tests report its absence.
    const daemon = h.start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(daemon);
    for (const name of ['A', 'B']) {
      await writeFile(h.file(`${name}.md`), `# ${name}\n**Tags**: #delegated-fix\n`);
    }
    await h.waitForAgents(2);
    const target = h.file('B.md');
    const agent = h.agents().find((a) => a.file === target);
    const { tmux } = await waitForState(agent!.session, (state) => state.tmux?.pane);
    const env = { ...process.env } as Record<string, string>;
    delete env.TMUX;
    delete env.TMUX_PANE;
    const term = pty.spawn(process.execPath, [CLI, 'attach', target, '--root', h.root], {
      cols: 120,
      rows: 30,
      env,
    });
    try {
      const clients = await waitFor(() => {
        try {
          return execFileSync(
            'tmux',
            ['-L', h.socket, 'list-clients', '-F', '#{client_session} #{pane_id}'],
            { encoding: 'utf8' },
          ).trim();
        } catch {
          return '';
        }
      });
      expect(clients).toBe(`dispatch ${tmux!.pane}`);
    } finally {
      term.kill();
    }
  });

  it('says why when the request has no session', async () => {
    const dir = await project();
    try {
      await writeFile(join(dir, 'R.md'), '# R\n**Tags**: #needs-fix\n');
      const result = await runCli(['attach', 'R.md'], { cwd: dir });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        'ERROR: R.md has no **Session**: line: no agent was started for it\n',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('says why when the session has no live agent, judged as the daemon judges it', async () => {
    const dir = await project();
    try {
      const ref = 'sessions/2026_11_22_080000_FIX_r_0001';
      const file = join(dir, 'R.md');
      await writeFile(file, `# R\n**Tags**: #claimed-fix\n**Session**: ${ref}\n`);
      await mkdir(join(dir, ref), { recursive: true });
      const pane = { socket: 'none', session: 'dispatch', window: null, pane: '%1' };
      const state = craftedState(dir, file, ref, { status: 'exited', exitCode: 1, tmux: pane });
      await writeFile(join(dir, ref, '.state.json'), JSON.stringify(state));
      const result = await runCli(['attach', 'R.md'], { cwd: dir });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `ERROR: Session ${ref} has no live agent: agent exited with code 1 without marking #done-fix\n`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('says a done item is done when its agent has exited, and exits 1', async () => {
    const dir = await project();
    try {
      const ref = 'sessions/2026_11_22_080000_FIX_r_0001';
      const file = join(dir, 'R.md');
      await writeFile(file, `# R\n**Tags**: #done-fix\n**Session**: ${ref}\n`);
      await mkdir(join(dir, ref), { recursive: true });
      const state = craftedState(dir, file, ref, { status: 'exited', exitCode: 0 });
      await writeFile(join(dir, ref, '.state.json'), JSON.stringify(state));
      const result = await runCli(['attach', 'R.md'], { cwd: dir });
      expect({ code: result.code, stderr: result.stderr }).toEqual({
        code: 1,
        stderr: 'ERROR: R.md is done (#done-fix); its agent has exited; see engine logs R.md\n',
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("exits with tmux's exit code when tmux cannot attach (stdin is no terminal)", async () => {
    const daemon = h.start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(daemon);
    const file = await h.request('R.md', '# R\n**Tags**: #delegated-fix\n');
    const [agent] = await h.waitForAgents(1);
    await waitForState(agent!.session, (state) => state.tmux?.pane);
    const env = { ...process.env };
    delete env.TMUX;
    delete env.TMUX_PANE;
    const result = await runCli(['attach', file, '--root', h.root], { env });
    expect(result.stderr).toContain('open terminal failed: not a terminal');
    expect(result.stderr).toMatch(
      /ERROR: tmux could not attach to the agent's window %\d+ \(exit 1\)\n$/,
    );
    expect(result.code).toBe(1);
  });
});

describe('inotify headroom', () => {
  it('warns when the tree needs more than half the watch limit, and not otherwise', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'engine-headroom-'));
    try {
      await mkdir(join(dir, 'sub'));
      for (let i = 0; i < 10; i++) await writeFile(join(dir, 'sub', `${i}.md`), 'x');
      await writeFile(join(dir, 'sub', 'notes.txt'), 'x');
      for (let i = 0; i < 4; i++) await mkdir(join(dir, 'sub', `d${i}`));
      await mkdir(join(dir, 'sub', 'node_modules'));
      const limitFile = join(dir, 'limit');
      await writeFile(limitFile, '16\n');
      // chokidar: one watch per markdown file and directory (15); parcel: one per directory (5).
      expect(await watchHeadroom([join(dir, 'sub')], { watcher: 'chokidar', limitFile })).toMatch(
        /needs about 15 inotify watches with chokidar and the limit .* is 16/,
      );
      expect(await watchHeadroom([join(dir, 'sub')], { watcher: 'parcel', limitFile })).toBeNull();
      await writeFile(limitFile, '8\n');
      expect(await watchHeadroom([join(dir, 'sub')], { watcher: 'parcel', limitFile })).toMatch(
        /needs about 5 inotify watches with parcel/,
      );
      await writeFile(limitFile, '100\n');
      expect(
        await watchHeadroom([join(dir, 'sub')], { watcher: 'chokidar', limitFile }),
      ).toBeNull();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
