/**
 * The real Claude Code CLI in print mode against the Messages API stand-in: the facts later work
 * relies on (the result line, the transcript file, a tool call's round trip, a usage limit).
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Children } from '../process/spawned.js';
import { waitFor } from '../helpers/wait-for.js';
import { PRINT_FLAGS, runClaude, useClaudeSandbox, type ClaudeRun } from '../helpers/claude-env.js';
import { contentText, reply, lastUserContent } from '../helpers/messages-api.js';

describe('claude -p against the Messages API stand-in', () => {
  const children = new Children();
  const claude = useClaudeSandbox();
  let cwd: string;

  beforeEach(async () => {
    cwd = await claude.sandbox.dir('project');
  });

  // Runs before the sandbox's closing hook: no CLI outlives its stand-in.
  afterEach(() => children.killAll());

  const run = (prompt: string, flags: string[] = []): Promise<ClaudeRun> =>
    runClaude([...PRINT_FLAGS, ...flags, '--', prompt], {
      cwd,
      env: claude.sandbox.env(),
      children,
    });

  const explain = (r: ClaudeRun) => `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;

  it('answers a text reply: exit 0, a last result line that completed, the transcript named by --session-id', async () => {
    claude.api.script(reply.text('Hello from the stand-in.'));
    const sessionId = randomUUID();

    const r = await run('Say hello', ['--session-id', sessionId]);

    expect(r.code, explain(r)).toBe(0);
    expect(r.lines.at(-1)).toMatchObject({
      type: 'result',
      subtype: 'success',
      is_error: false,
      terminal_reason: 'completed',
      result: 'Hello from the stand-in.',
      session_id: sessionId,
      api_error_status: null,
    });
    expect(r.lines[0]).toMatchObject({ type: 'system', subtype: 'init', session_id: sessionId });
    expect(existsSync(claude.sandbox.transcript(cwd, sessionId))).toBe(true);
    const [request, ...more] = claude.api.messages();
    expect(more).toEqual([]);
    expect(request?.stream).toBe(true);
    expect(contentText(lastUserContent(request!))).toContain('Say hello');
    expect(claude.api.unscripted).toEqual([]);
  });

  it('runs a scripted Bash call and sends its output back as the tool result', async () => {
    claude.api.script(reply.bash('echo "stand-in $((6 * 7))"'), reply.text('Ran it.'));

    const r = await run('Run a command');

    expect(r.code, explain(r)).toBe(0);
    expect(r.lines.at(-1)).toMatchObject({ type: 'result', terminal_reason: 'completed' });
    const [, followUp, ...more] = claude.api.messages();
    expect(more).toEqual([]);
    const result = lastUserContent(followUp!).find((b) => b.type === 'tool_result');
    expect(result).toBeDefined();
    expect(contentText([result!])).toContain('stand-in 42');
    expect(claude.api.unscripted).toEqual([]);
  });

  it('waits on a held request until the test releases it', async () => {
    claude.api.script(reply.hang());

    const running = run('Take your time');
    await waitFor(() => claude.api.heldCount === 1, { message: 'the stand-in to hold a request' });
    claude.api.release(reply.text('Released now.'));
    const r = await running;

    expect(r.code, explain(r)).toBe(0);
    expect(r.lines.at(-1)).toMatchObject({ type: 'result', result: 'Released now.' });
    expect(claude.api.messages()).toHaveLength(1);
  });

  it('reports a usage limit: exit 1, an assistant line with error rate_limit, a result with status 429', async () => {
    claude.api.script(reply.rateLimit());

    const r = await run('Do some work');

    expect(r.code, explain(r)).toBe(1);
    expect(claude.api.messages()).toHaveLength(1);
    const assistant = r.lines.find((l) => l.type === 'assistant' && l.error === 'rate_limit');
    expect(assistant, explain(r)).toBeDefined();
    expect(r.lines.at(-1)).toMatchObject({
      type: 'result',
      is_error: true,
      terminal_reason: 'api_error',
      api_error_status: 429,
    });
  });
});
