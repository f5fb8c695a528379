/**
 * The daemon finds its project root as every command does (docs/CLI.md, "The project root"):
 * started in sessions/, it runs on the project above, never on sessions/sessions beside it.
 */
import { spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rootArgs, useDaemonHarness, waitForReady } from '../helpers/daemon-harness.js';
import { CLI, runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

describe('engine run --monitor-tags started in sessions/', () => {
  const h = useDaemonHarness();
  /** The test's tmux server and agent: rootArgs without its leading `--root <root>`. */
  const agentArgs = () => rootArgs(h.testRoot).slice(2);
  const env = { ...process.env, TMUX: '', TMUX_PANE: '', ENGINE_NOTIFY_VIA: 'none' };

  it('monitors the project above and dispatches its items', async () => {
    const file = await h.request('R.md', '# R\n**Tags**: #delegated-fix\n');
    const daemon = h.children.track(
      spawn(
        process.execPath,
        [CLI, 'run', '--monitor-tags', ...agentArgs(), '--debounce-ms', '300'],
        {
          cwd: h.sessions,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      ),
    );
    let output = '';
    daemon.stdout?.setEncoding('utf8').on('data', (d: string) => (output += d));
    daemon.stderr?.setEncoding('utf8').on('data', (d: string) => (output += d));
    const root = realpathSync(h.root);
    await waitFor(() => output.includes(`(root ${root})`), {
      message: () => `the daemon to monitor ${root}; output:\n${output}`,
    });
    const [agent] = await waitFor(() => h.agents().length === 1 && h.agents(), {
      message: () => `the agent to start; the daemon's output:\n${output}`,
    });
    expect(realpathSync(agent!.file)).toBe(realpathSync(file));
    expect(existsSync(join(h.sessions, 'sessions'))).toBe(false);
  });

  it('is refused while a daemon runs on the project, and makes nothing in sessions/', async () => {
    const first = h.start();
    await waitForReady(first);
    const second = await runCli(['run', '--monitor-tags', '--once', ...agentArgs()], {
      cwd: h.sessions,
      env,
    });
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(
      new RegExp(`^ERROR: another daemon \\(pid ${first.child.pid}\\) is monitoring `),
    );
    expect(existsSync(join(h.sessions, 'sessions'))).toBe(false);
  });
});
