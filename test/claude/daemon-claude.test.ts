/**
 * `engine run --monitor-tags` with the real Claude Code CLI as its agent (`--agent-cmd`), the
 * Messages API stand-in scripting the agent's one tool call: the whole lifecycle, done by the
 * CLI executing `engine tag swap` in the agent's environment.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { claudeBin, useClaudeSandbox } from '../helpers/claude-env.js';
import {
  shellQuote,
  tagsOf,
  useDaemonHarness,
  waitForState,
  waitForTag,
} from '../helpers/daemon-harness.js';
import { contentText, reply, lastUserContent } from '../helpers/messages-api.js';

// Registered before the daemon harness: after-hooks run in reverse order (vitest's "stack"), so
// the harness ends daemon and agents before the stand-in and the sandbox go (an agent that
// outlived them wrote its transcript into a sandbox already removed).
const claude = useClaudeSandbox();
const h = useDaemonHarness();

it('takes an approved item from #delegated-fix to #done-fix through the real CLI', async () => {
  claude.api.script(
    reply.bash(
      'engine tag swap "$ENGINE_REQUEST_FILE" "#claimed-$ENGINE_NOUN" "#done-$ENGINE_NOUN"',
    ),
    reply.text('Marked it done.'),
  );
  const file = await h.request('fix-me.md', '# Fix me\n**Tags**: #delegated-fix\n\nThe bug.\n');
  const agentCmd = `${shellQuote(claudeBin())} -p --output-format stream-json --verbose --allowedTools Bash -- '{skill} {file}'`;

  const d = h.start(['--agent-cmd', agentCmd], claude.sandbox.env());

  // A run that fails to mark done is requeued to #needs-fix: the test ends there, not at a timeout.
  const done = await waitForTag(file, ['#done-fix', '#needs-fix'], 45_000);
  expect(tagsOf(done), `${done}\ndaemon:\n${d.output().slice(-3000)}`).toEqual(['#done-fix']);
  const ref = /^\*\*Session\*\*: (.+)$/m.exec(done)?.[1];
  expect(ref).toBeDefined();
  const final = await waitForState(join(h.root, ref!), (s) => s.status === 'exited');
  expect(final.exitCode).toBe(0);

  const [first, followUp, ...more] = claude.api.messages();
  expect(more).toEqual([]);
  expect(contentText(lastUserContent(first!))).toContain(`/fix ${file}`);
  const result = lastUserContent(followUp!).find((b) => b.type === 'tool_result');
  expect(result?.is_error).not.toBe(true);
  expect(claude.api.unscripted).toEqual([]);
});
