/**
 * Each agent's prompt names the other items running now (issue 23, "Awareness"), through a real
 * daemon, tmux and processes: a stand-in for Claude Code (`--agent claude-print --claude-bin`)
 * that records its argument vector, and a custom template's `{running}`.
 */
import { readFile, chmod, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import {
  shellQuote,
  TEST_AGENT,
  useDaemonHarness,
  type AgentStart,
} from '../helpers/daemon-harness.js';
import { waitFor } from '../helpers/wait-for.js';

const h = useDaemonHarness();

const request = (title: string) => `# ${title}\n**Tags**: #delegated-fix\n\nThe bug.\n`;

/** The argv it was started with, NUL-separated, in its session; then it waits to be ended. */
const RECORD_ARGV = [
  'for a in "$@"; do printf \'%s\\0\' "$a"; done > "$ENGINE_SESSION_DIR/argv.tmp"',
  'mv "$ENGINE_SESSION_DIR/argv.tmp" "$ENGINE_SESSION_DIR/argv"',
  'exec sleep 600',
];

async function argvOf(sessionDir: string): Promise<string[]> {
  const path = join(sessionDir, 'argv');
  const text = await waitFor(() => readFile(path, 'utf8').catch(() => null), {
    message: `${path} written by the stand-in`,
  });
  return text.split('\0').slice(0, -1);
}

/** The session directory of the request's claim, from its Session line. */
async function sessionOf(file: string): Promise<string> {
  const text = await waitFor(
    async () => {
      const t = await readFile(file, 'utf8');
      return /^\*\*Session\*\*: (.+)$/m.test(t) && t;
    },
    { message: `the claim of ${file}` },
  );
  return join(h.root, /^\*\*Session\*\*: (.+)$/m.exec(text)![1]!);
}

it('claude-print: the second agent is told, in its system prompt, that the first runs here', async () => {
  const fake = join(h.root, 'fake-claude');
  await writeFile(fake, ['#!/bin/sh', ...RECORD_ARGV, ''].join('\n'));
  await chmod(fake, 0o755);
  const first = await h.request('first.md', request('First'));
  const d = h.start(['--agent', 'claude-print', '--claude-bin', fake]);
  const firstArgv = await argvOf(await sessionOf(first));
  expect(firstArgv, d.output()).not.toContain('--append-system-prompt');

  const second = await h.request('second.md', request('Second'));
  const argv = await argvOf(await sessionOf(second));
  const appended = argv.filter((word) => word === '--append-system-prompt');
  expect(appended, d.output()).toHaveLength(1);
  const note = argv[argv.indexOf('--append-system-prompt') + 1];
  expect(note).toBe(
    'Other items run now (1); leave their files and branches to their agents: ' +
      `sessions/first.md (noun fix, host ${hostname()}).`,
  );
  expect(argv.slice(-2)).toEqual(['--', `/fix ${second}`]);
}, 60_000);

it('custom: {running} is one argument naming the other running items, empty when none runs', async () => {
  const template = `${shellQuote(process.execPath)} ${shellQuote(TEST_AGENT)} {file} {running}`;
  const env = { TEST_AGENT_MODE: 'hold' };
  const first = await h.request('first.md', request('First'));
  const d = h.start(['--agent', 'custom', '--agent-cmd', template], env);
  const byFile = (file: string) => (a: AgentStart) => a.file === file;
  const [one] = await h.waitForAgents(1);
  expect(one?.argv, d.output()).toEqual([first, '']);

  const second = await h.request('second name.md', request('Second'));
  const agents = await h.waitForAgents(2);
  expect(agents.find(byFile(second))?.argv, d.output()).toEqual([
    second,
    'Other items run now (1); leave their files and branches to their agents: ' +
      `sessions/first.md (noun fix, host ${hostname()}).`,
  ]);
}, 60_000);
