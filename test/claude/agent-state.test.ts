/**
 * The agent's state from the real Claude Code CLI's own hooks, under `engine run --monitor-tags
 * --agent claude-print`: the per-run `--settings` hooks run `engine agent-hook`, and `engine
 * status --json` shows `agentState` while the stand-in holds a request open. Print mode fires no
 * Notification and answers a PermissionRequest itself, so no print run waits for a human, and it
 * exits right after a usage limit, cutting off the StopFailure hook that would record `limited`
 * (docs/DAEMON.md). The wait is tested through the daemon in test/daemon/waiting-for-input.test.ts,
 * the mapping in test/agents/agent-state.test.ts.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { type AgentState } from '../../src/agents/agent-state.js';
import { sessionDir } from '../../src/sessions/session-dir.js';
import { claudeBin, useClaudeSandbox } from '../helpers/claude-env.js';
import { tagsOf, useDaemonHarness, waitForState, waitForTag } from '../helpers/daemon-harness.js';
import { reply } from '../helpers/messages-api.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

// Registered before the daemon harness: after-hooks run in reverse order (vitest's "stack"), so
// the harness ends daemon and agents before the stand-in and the sandbox go (an agent that
// outlived them wrote its transcript into a sandbox already removed).
const claude = useClaudeSandbox();
const h = useDaemonHarness();

const REQUEST = '# Fix me\n**Tags**: #delegated-fix\n\nThe bug.\n';
const SWAP = 'engine tag swap "$ENGINE_REQUEST_FILE" "#claimed-$ENGINE_NOUN" "#done-$ENGINE_NOUN"';
const start = () =>
  h.start(['--agent', 'claude-print', '--claude-bin', claudeBin()], claude.sandbox.env());

interface Running {
  file: string;
  session: string | null;
  agentState: AgentState | null;
}

async function running(): Promise<Running[]> {
  const status = await runCli(['status', '--json', '--root', h.root]);
  return (JSON.parse(status.stdout) as { running: Running[] }).running;
}

const stateFile = async (dir: string): Promise<AgentState> =>
  JSON.parse(await readFile(sessionDir(dir).agentState, 'utf8')) as AgentState;

it('shows the agent working while the API holds its request after a tool call; the run ends `ended`', async () => {
  claude.api.script(reply.bash('echo looked'), reply.hang(), reply.text('Marked it done.'));
  const file = await h.request('fix-me.md', REQUEST);
  const d = start();

  await waitFor(() => claude.api.heldCount === 1, {
    timeoutMs: 45_000,
    message: () => `the CLI's second request, held; daemon:\n${d.output().slice(-3000)}`,
  });
  const [item] = await waitFor(
    async () => {
      const items = await running();
      return items[0]?.agentState?.event === 'PostToolUse' && items;
    },
    { timeoutMs: 20_000, message: 'agentState in engine status --json' },
  );
  expect(item?.file).toBe(file);
  expect(item?.agentState).toMatchObject({ state: 'working', event: 'PostToolUse' });
  expect(Date.parse(item!.agentState!.at)).not.toBeNaN();
  const text = await runCli(['status', '--root', h.root]);
  expect(text.stdout).toMatch(/agent working since (?:just now|.+ ago) \(PostToolUse\)/);
  expect(text.stdout).not.toContain('AGENT WAITING');

  claude.api.release(reply.bash(SWAP));
  const done = await waitForTag(file, ['#done-fix', '#needs-fix'], 45_000);
  expect(tagsOf(done), `${done}\ndaemon:\n${d.output().slice(-3000)}`).toEqual(['#done-fix']);
  const dir = join(h.root, item!.session!);
  await waitForState(dir, (s) => s.status === 'exited');
  expect(await stateFile(dir)).toMatchObject({ state: 'ended', event: 'SessionEnd' });
  // The hooks said nothing to the agent: its API requests hold no hook output.
  expect(JSON.stringify(claude.api.messages())).not.toContain('agent-hook');
});
