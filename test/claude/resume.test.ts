/**
 * Resume of the prior conversation with the real Claude Code CLI (`--agent claude-print`): a
 * requeued item approved again continues attempt 1's conversation as a new session with its own
 * id (the stand-in sees attempt 1's messages in attempt 2's first request), unless the request
 * text changed, when attempt 2 starts fresh. A resumed conversation that says it marked the item
 * done never counts: only the tag in the file does.
 */
import { existsSync, realpathSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { claudeBin, useClaudeSandbox } from '../helpers/claude-env.js';
import {
  recoveries,
  tagsOf,
  useDaemonHarness,
  waitForState,
  waitForTag,
  type StateRecord,
} from '../helpers/daemon-harness.js';
import { contentText, reply, type MessagesBody } from '../helpers/messages-api.js';
import { runCli } from '../helpers/run-cli.js';

// Registered before the daemon harness: after-hooks run in reverse order (vitest's "stack"), so
// the harness ends daemon and agents before the stand-in and the sandbox go (an agent that
// outlived them wrote its transcript into a sandbox already removed).
const claude = useClaudeSandbox();
const h = useDaemonHarness();

const REQUEST = '# Fix me\n**Tags**: #delegated-fix\n\nThe bug.\n';
const ATTEMPT_ONE = 'ATTEMPT-ONE-NOTES: I looked, and I marked it done.';

/** Everything the conversation of a request holds, as text. */
const conversation = (body: MessagesBody): string =>
  body.messages.map((m) => contentText(m.content)).join('\n');

/** Runs attempt 1 (a text answer, no done swap) until it is requeued; returns its record. */
async function firstAttempt(file: string): Promise<{ state: StateRecord; requests: number }> {
  claude.api.script(reply.text(ATTEMPT_ONE));
  const d = h.start(['--agent', 'claude-print', '--claude-bin', claudeBin()], claude.sandbox.env());
  const requeued = await waitForTag(file, ['#needs-fix', '#done-fix'], 45_000);
  expect(tagsOf(requeued), d.output().slice(-3000)).toEqual(['#needs-fix']);
  const prior = /\*\*Prior Session\*\*: (\S+)/.exec(requeued)![1]!;
  const state = await waitForState(join(h.root, prior), (s) => s.status === 'abandoned');
  return { state, requests: claude.api.messages().length };
}

/** Approves the requeued item again, the way `engine tag approve` would. */
async function approveAgain(file: string): Promise<void> {
  const swap = await runCli(['tag', 'swap', file, '#needs-fix', '#delegated-fix']);
  expect(swap.code, swap.stderr).toBe(0);
}

async function secondAttempt(file: string): Promise<StateRecord> {
  const requeued = await waitForText2(file);
  // Attempt 2's entry is the last one.
  const ref = [...requeued.matchAll(/\*\*Prior Session\*\*: (\S+)/g)].at(-1)![1]!;
  expect(requeued).toMatch(/\*\*Attempt\*\*: 2\s*$/);
  return waitForState(join(h.root, ref), (s) => s.status === 'abandoned');
}

/** The file once attempt 2 was requeued too (two Recovery entries). */
async function waitForText2(file: string): Promise<string> {
  const text = await waitForTag(file, ['#needs-fix', '#done-fix'], 45_000);
  expect(tagsOf(text)).toEqual(['#needs-fix']);
  expect(recoveries(text)).toBe(2);
  return text;
}

it('continues attempt 1 as a new session with its own id; a done claimed in the conversation does not count', async () => {
  const file = await h.request('fix-me.md', REQUEST);
  const first = await firstAttempt(file);
  const priorId = first.state.agentSessionId as string;
  expect(first.state.cwd).toBe(h.root);
  expect(first.state.requestDigest).toMatch(/^sha256:[0-9a-f]{64}$/);

  // Attempt 2 says nothing new and does not swap: its conversation already says "done".
  claude.api.script(reply.text('Continuing; nothing more to do.'));
  await approveAgain(file);
  const second = await secondAttempt(file);

  const resumed = claude.api.messages()[first.requests]!;
  expect(conversation(resumed)).toContain(ATTEMPT_ONE);
  expect(second.agentSessionId).toMatch(/^[0-9a-f-]{36}$/);
  expect(second.agentSessionId).not.toBe(priorId);
  expect(second.resumedFrom).toBe(priorId);
  const argv = second.agentArgv as string[];
  expect(argv).toEqual(expect.arrayContaining(['--resume', priorId, '--fork-session']));
  // The fork runs under the id engine gave it: its transcript, and its stream's session id.
  const cwd = realpathSync(h.root);
  expect(existsSync(claude.sandbox.transcript(cwd, second.agentSessionId as string))).toBe(true);
  const log = await readFile(join(h.root, second.sessionRef as string, 'agent.log'), 'utf8');
  expect(log).toContain(`"session_id":"${second.agentSessionId as string}"`);
  expect(log).not.toContain(`"session_id":"${priorId}"`);
  // Attempt 1's conversation stays as it was.
  expect(existsSync(claude.sandbox.transcript(cwd, priorId))).toBe(true);
  expect(claude.api.unscripted).toEqual([]);
});

it('starts fresh, naming the prior session, when the request text changed in between', async () => {
  const file = await h.request('fix-me.md', REQUEST);
  const first = await firstAttempt(file);
  const priorId = first.state.agentSessionId as string;

  const text = await readFile(file, 'utf8');
  await writeFile(file, text.replace('The bug.', 'The bug, and the other bug.'));
  claude.api.script(reply.text('Fresh look.'));
  await approveAgain(file);
  const second = await secondAttempt(file);

  const fresh = claude.api.messages()[first.requests]!;
  expect(conversation(fresh)).not.toContain(ATTEMPT_ONE);
  expect(JSON.stringify(fresh.system ?? '')).toContain(priorId);
  expect(second.resumedFrom).toBeNull();
  expect(second.agentArgv).not.toContain('--resume');
  expect(second.requestDigest).not.toBe(first.state.requestDigest);
  expect(claude.api.unscripted).toEqual([]);
});
