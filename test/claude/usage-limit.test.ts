/**
 * The usage-limit governor with the real Claude Code CLI (`--agent claude-print`) against the
 * Messages API stand-in, which answers HTTP 429 with the unified rate-limit headers: the limited
 * items go back to `#delegated-X` (no human needed, no attempt spent), the whole queue pauses
 * (kept across a kill -9 of the daemon), one probe goes first at the reset, then the rest.
 * The CLI (2.1.330) does not put the reset time of a 429 in its print stream, so the pause lasts
 * `--limit-backoff` (here 24 s).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { claudeBin, useClaudeSandbox } from '../helpers/claude-env.js';
import {
  events,
  read,
  recoveries,
  tagsOf,
  useDaemonHarness,
  waitForReady,
  waitForTag,
  waitForText,
  type DaemonProcess,
} from '../helpers/daemon-harness.js';
import { reply } from '../helpers/messages-api.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';
import { recordFigure } from '../reliability/support.js';

// Registered before the daemon harness: after-hooks run in reverse order (vitest's "stack"), so
// the harness ends daemon and agents before the stand-in and the sandbox go (an agent that
// outlived them wrote its transcript into a sandbox already removed).
const claude = useClaudeSandbox();
const h = useDaemonHarness();

const pauseFile = () => join(h.root, 'sessions', '.engine', 'pause.json');
const readPauseFile = async () => JSON.parse(await read(pauseFile())) as { until: string };
type Logged = ReturnType<typeof events>[number] & { time?: string; attempt?: number };
const ofKind = (kind: string): Logged[] => events(h.root).filter((e) => e.event === kind);
const timeOf = (e: Logged) => Date.parse(String(e.time));

function startDaemon(backoffMinutes: string): DaemonProcess {
  return h.start(
    [
      '--agent',
      'claude-print',
      '--claude-bin',
      claudeBin(),
      '--max-agents',
      '3',
      '--limit-backoff',
      backoffMinutes,
    ],
    claude.sandbox.env(),
  );
}

it('a 429 during three print runs pauses the queue, survives kill -9, lets one probe go, then all end done', async () => {
  // Each of the three agents' first request is answered 429; a fourth item waits for a slot.
  // The reset is an hour ahead: given one a few seconds ahead, the CLI waits and retries by
  // itself (seen with 2.1.330), and the agent never fails.
  claude.api.script(reply.rateLimit(), reply.rateLimit(), reply.rateLimit());
  const all: string[] = [];
  for (const n of ['a', 'b', 'c', 'd'])
    all.push(await h.request(`${n}.md`, `# ${n}\n**Tags**: #delegated-fix\n\nWork ${n}.\n`));
  let d = startDaemon('0.4');

  const limited = await waitFor(
    async () => {
      const texts = await Promise.all(all.map((f) => read(f)));
      return texts.filter((t) => recoveries(t) === 1).length === 3 ? texts : null;
    },
    { timeoutMs: 90_000, message: () => `three requeues; daemon:\n${d.output().slice(-3000)}` },
  );
  for (const text of limited) {
    expect(tagsOf(text), `${text}\n${d.output().slice(-3000)}`).toEqual(['#delegated-fix']);
    if (recoveries(text) === 0) continue;
    expect(text).toMatch(/\*\*Reason\*\*: usage limit, resets at \S+Z/);
    expect(text).toContain('**Failure**: usage-limit (not an attempt)');
    expect(text).toContain('**Attempt**: 1');
  }
  const files = all.filter((_, i) => recoveries(limited[i]!) === 1);
  const late = all.find((_, i) => recoveries(limited[i]!) === 0)!;
  const pause = await readPauseFile();
  const until = Date.parse(pause.until);
  expect(ofKind('limit-paused').length).toBeGreaterThanOrEqual(1);

  // kill -9 during the pause: the restarted daemon keeps it.
  await d.kill9();
  d = startDaemon('0.4');
  await waitForReady(d, 60_000);
  expect(existsSync(pauseFile())).toBe(true);
  claude.api.script(...Array.from({ length: 12 }, () => reply.markDone()));

  for (const file of all) {
    const text = await waitForTag(file, ['#done-fix', '#needs-fix'], 120_000);
    expect(tagsOf(text), `${text}\n${d.output().slice(-3000)}`).toEqual(['#done-fix']);
  }
  for (const file of files) expect(recoveries(await read(file))).toBe(1);
  expect(recoveries(await read(late))).toBe(0);

  const claimed = ofKind('claimed');
  // Three before the limit, then each of the four once: none twice, none lost.
  expect(claimed).toHaveLength(7);
  const after = claimed.slice(3);
  for (const e of after) expect(timeOf(e)).toBeGreaterThanOrEqual(until);
  expect(new Set(after.map((e) => e.file)).size).toBe(4);
  // The probe went first and alone: every other claim came after the lift.
  const [lifted] = ofKind('limit-lifted');
  expect(lifted?.reason).toMatch(/^probe /);
  expect(timeOf(after[0]!)).toBeLessThanOrEqual(timeOf(lifted!));
  for (const e of after.slice(1)) expect(timeOf(e)).toBeGreaterThanOrEqual(timeOf(lifted!));
  expect(existsSync(pauseFile())).toBe(false);
  // The limit cost no attempt: each session after it is attempt 1 again.
  const attemptsOnLimit = after.reduce((sum, e) => sum + (Number(e.attempt) - 1), 0);
  const lost = all.length - new Set(after.map((e) => e.file)).size;
  const twice = after.length - new Set(after.map((e) => e.file)).size;
  expect({ lost, twice, attemptsOnLimit }).toEqual({ lost: 0, twice: 0, attemptsOnLimit: 0 });
  recordFigure('usage-limit pause and kill -9', { lost, twice, attemptsOnLimit });
});

it('engine resume lifts a pause, and the limited item runs at once', async () => {
  claude.api.script(reply.rateLimit(), reply.markDone(), reply.markDone());
  const file = await h.request('a.md', '# a\n**Tags**: #delegated-fix\n\nWork.\n');
  const d = startDaemon('60');
  await waitForText(file, (text) => recoveries(text) === 1 && existsSync(pauseFile()), {
    timeoutMs: 60_000,
    message: () => `the pause; daemon:\n${d.output().slice(-3000)}`,
  });
  expect(tagsOf(await read(file))).toEqual(['#delegated-fix']);
  const status = await runCli(['status', '--root', h.root, '--json']);
  const paused = (JSON.parse(status.stdout) as { paused: { until: string; reason: string } })
    .paused;
  expect(Date.parse(paused.until)).toBeGreaterThan(Date.now() + 50 * 60_000);
  expect(paused.reason).toMatch(/^usage limit, resets at /);

  const resumed = await runCli(['resume', '--root', h.root]);
  expect(resumed.code, resumed.stderr).toBe(0);
  expect(resumed.stdout).toContain('Lifted the pause');
  const text = await waitForTag(file, ['#done-fix', '#needs-fix'], 60_000);
  expect(tagsOf(text), d.output().slice(-3000)).toEqual(['#done-fix']);
  expect(ofKind('limit-lifted')[0]?.reason).toBe('lifted by hand (engine resume)');
  const again = await runCli(['resume', '--root', h.root]);
  expect(again.stdout).toContain('not paused');
});
