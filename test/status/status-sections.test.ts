/**
 * `engine status` and `engine status --json` on a fixture project with one item of each kind:
 * the daemon that runs, what needs you, what waits and why, what runs, what is stale and what is
 * done, in this order, the same in both outputs; every human line within 80 columns.
 */
import { link, mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { selfIdentity } from '../../src/process/process-identity.js';
import type { EngineEvent } from '../../src/sessions/event-log.js';
import { craftedState } from '../helpers/crafted-state.js';
import { runCli } from '../helpers/run-cli.js';

const TAGS_MD = `# Tags

## §TAG_DISPATCH

| Tag | Skill | Mode | Priority | Daemon | Max |
|-----|-------|------|----------|--------|-----|
| \`#delegated-fix\` | \`/fix\` | agent | 3 | yes | 1 |
| \`#delegated-docs\` | \`/docs\` | agent | 4 | yes | |
| \`#delegated-chores\` | \`/chores\` | agent | 5 | yes | |
| \`#delegated-manual\` | \`/manual\` | interactive | 6 | no | |
`;

const LONG_DIR = `${'a-deep-directory-'.repeat(4)}x`;
const LONG_NAME = `${'a-request-with-a-long-name-'.repeat(4)}end.md`;

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'engine-status-'));
  await mkdir(join(root, 'directives'));
  await mkdir(join(root, 'sessions', '.engine'), { recursive: true });
  await writeFile(join(root, 'directives', 'TAGS.md'), TAGS_MD);
  await writeFile(
    join(root, 'directives', 'engine.json'),
    JSON.stringify({ maxAgents: 2, debounceMs: 60_000 }),
  );
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
const HOUR = 3600_000;

/** A request under sessions/, last written an hour ago unless `fresh`. */
async function request(name: string, body: string, fresh = false): Promise<string> {
  const file = join(root, 'sessions', name);
  await mkdir(join(file, '..'), { recursive: true });
  await writeFile(file, `# ${basename(name, '.md')}\n${body}\n`);
  const then = (Date.now() - HOUR) / 1000;
  if (!fresh) await utimes(file, then, then);
  return file;
}

/** A claim whose session's wrapper is this test process: alive, as the daemon judges it. */
async function runningClaim(name: string, noun: string, agentState: object): Promise<string> {
  const ref = `sessions/2026_11_26_000000_X_${noun}_0001`;
  const file = await request(name, `**Tags**: #claimed-${noun}\n**Session**: ${ref}`);
  const me = selfIdentity();
  const state = craftedState(root, file, ref, {
    ...{ pid: me.pid, startTicks: me.startTicks, bootId: me.bootId, host: me.host },
    noun,
    tag: `#claimed-${noun}`,
    attempt: 2,
    startedAt: ago(5 * 60_000 + 5000),
  });
  await mkdir(join(root, ref), { recursive: true });
  await writeFile(join(root, ref, '.state.json'), JSON.stringify(state));
  await writeFile(join(root, ref, 'agent-state.json'), JSON.stringify(agentState));
  return file;
}

/** The daemon lock held by this test process, and its start in the event log, with `more`. */
async function daemonAndEvents(more: EngineEvent[]): Promise<void> {
  const me = selfIdentity();
  await writeFile(join(root, 'sessions', '.engine', 'daemon.lock'), `${JSON.stringify(me)}\n`);
  const started = { event: 'daemon-started', pid: me.pid, host: hostname(), time: ago(2 * HOUR) };
  const lines = [started, ...more].map((e) => JSON.stringify(e)).join('\n');
  await writeFile(join(root, 'sessions', '.engine', 'events.jsonl'), `${lines}\n`);
}

const RECOVERY = `
## Recovery
*   **Reason**: agent exited with code 1 without marking \`#done-fix\`; gave up after 3 attempts
*   **Action**: Re-queued for processing (back to \`#needs-fix\`, approve again to retry)
*   **Attempt**: 3`;

async function fixture(): Promise<Record<string, string>> {
  const f: Record<string, string> = {
    working: await runningClaim('R-fix.md', 'fix', {
      state: 'working',
      event: 'PreToolUse',
      at: ago(60_000),
    }),
    asking: await runningClaim('R-chores.md', 'chores', {
      ...{ state: 'waiting', event: 'Notification', at: ago(120_000) },
      detail: 'Claude needs your permission to use Bash',
    }),
    approval: await request('A.md', '**Tags**: #needs-fix'),
    next: await request('X.md', '**Tags**: #next-fix'),
    gaveUp: await request('G.md', `**Tags**: #needs-docs\n${RECOVERY.replaceAll('fix', 'docs')}`),
    typo: await request('T.md', '**Tags**: #delegate-fix'),
    plain: await request('P.md', 'Tags: #delegated-fix'),
    inline: await request('I.md', '\n1. the typo #delegated-fix'),
    twice: await request('2.md', '**Tags**: #done-fix #delegated-fix'),
    noRow: await request('N.md', '**Tags**: #delegated-nosuch'),
    manual: await request('M.md', '**Tags**: #delegated-manual'),
    linked: await request('H.md', '**Tags**: #delegated-docs'),
    nounMax: await request('W-fix.md', '**Tags**: #delegated-fix'),
    long: await request(join(LONG_DIR, LONG_NAME), '**Tags**: #delegated-docs'),
    agents: await request('W-chores.md', '**Tags**: #delegated-chores'),
    quiet: await request('W-quiet.md', '**Tags**: #delegated-docs', true),
    retry: await request(
      'W-retry.md',
      `**Tags**: #delegated-docs\n\n## Recovery\n*   **Failure**: agent\n*   **Not Before**: ${new Date(Date.now() + HOUR).toISOString()}`,
    ),
    claim: await request('W-claim.md', '**Tags**: #claimed-docs #delegated-chores'),
  };
  await link(f.linked!, join(root, 'H-elsewhere.md'));
  const done = (file: string, session: string, event = 'done'): EngineEvent => ({
    event: event as EngineEvent['event'],
    file: join(root, 'sessions', file),
    noun: 'fix',
    session,
    time: ago(30 * 60_000),
  });
  await daemonAndEvents([
    ...Array.from({ length: 21 }, (_, i) => done(`E${i}.md`, `sessions/e${i}`)),
    // Retried, then done: one item, listed once.
    done('D.md', 'sessions/d1', 'exited'),
    done('D.md', 'sessions/d1', 'requeued'),
    done('D.md', 'sessions/d2'),
    done('D.md', 'sessions/d2', 'exited'),
  ]);
  return f;
}

interface Json {
  daemon: { state: string; pid: number; since: string };
  needsYou: Array<{ kind: string; file: string }>;
  waiting: Array<{ file: string; wait: { kind: string } | null }>;
  next: Array<{ file: string; tag: string }>;
  running: Array<{ file: string; attempt: number; ageSeconds: number }>;
  stale: Array<{ file: string }>;
  done: Array<{ file: string; event: string }>;
  doneMore: number;
}

describe('engine status sections', () => {
  it('shows one item of each kind in its section, the same in --json and in text', async () => {
    const f = await fixture();
    const json = await runCli(['status', '--json', '--root', root]);
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as Json;
    expect(report.daemon).toMatchObject({ state: 'running', pid: process.pid });
    expect(report.needsYou.map((n) => [n.kind, n.file])).toEqual([
      ['input', f.asking],
      ['given-up', f.gaveUp],
      ['approval', f.approval],
      // In the order the walk found them.
      ...[f.twice, f.linked, f.inline, f.manual, f.noRow, f.plain, f.typo].map((file) => [
        'not-dispatched',
        file,
      ]),
    ]);
    const waiting = report.waiting.map((w) => [w.file, w.wait?.kind ?? null]);
    expect(waiting).toEqual([
      [f.nounMax, 'noun-max'],
      [f.long, 'agents'],
      [f.agents, 'agents'],
      [f.quiet, 'quiet'],
      [f.retry, 'not-before'],
      [f.claim, 'claim'],
    ]);
    expect(report.next.map((n) => [n.file, n.tag])).toEqual([[f.next, '#next-fix']]);
    expect(report.running.map((c) => [c.file, c.attempt])).toEqual([
      [f.asking, 2],
      [f.working, 2],
    ]);
    expect(report.stale.map((c) => c.file)).toEqual([f.claim]);
    expect(report.done).toHaveLength(20);
    expect(report.done[0]).toMatchObject({ file: join(root, 'sessions', 'D.md'), event: 'done' });
    expect(report.done.filter((e) => e.file.endsWith('D.md'))).toHaveLength(1);
    expect(report.doneMore).toBe(2);

    const text = await runCli(['status', '--root', root]);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    const too = lines.filter((line) => line.length > 80);
    expect(too, text.stdout).toEqual([]);
    const headings = lines.filter((line) => /^\S/.test(line)).map((line) => line.split(/[ :(]/)[0]);
    expect(headings).toEqual([
      'Project',
      '§TAG_DISPATCH',
      'Requests',
      'Daemon',
      'Needs',
      'Waiting',
      'Next',
      'Running',
      'Stale',
      'Done',
    ]);
    const out = text.stdout.replace(/\s+/g, ' ');
    for (const expected of [
      `Daemon: pid ${process.pid} on host ${hostname()}, since 2 h ago`,
      'Needs you (10):',
      'sessions/R-chores.md #claimed-chores AGENT WAITING FOR INPUT since 2 min ago: Claude needs your permission to use Bash',
      'sessions/G.md #needs-docs given up agent exited with code 1',
      'sessions/A.md #needs-fix waits for approval A',
      'sessions/T.md:2 #delegate-fix never dispatched',
      'Waiting (6), in dispatch order:',
      '1. sessions/W-fix.md #delegated-fix /fix P2 fix is at its Max in §TAG_DISPATCH: 1 of 1 running',
      'all agents busy: 2 of --max-agents 2 running',
      'written just now: ready in ',
      "a retry's backoff: ready in 59 min",
      'Next (1), for the next skill to claim: sessions/X.md #next-fix X',
      'after #claimed-docs in the same file ends: one claim per file',
      'Running (2):',
      'sessions/R-fix.md #claimed-fix attempt 2, 5 min',
      'agent working since 1 min ago (PreToolUse)',
      'Stale (1): sessions/W-claim.md #claimed-docs claimed without a Session line',
      'Done in the last 24 h (22), most recent first: 30 min ago done sessions/D.md #done-fix',
      '… and 2 more',
    ])
      expect(out, text.stdout).toContain(expected);
    expect(out.match(/sessions\/D\.md/g)).toHaveLength(1);
  });

  it('names the pause, why and its probe, and every ready item waits for it', async () => {
    const file = await request('W.md', '**Tags**: #delegated-docs');
    const until = new Date(Date.now() + 10 * 60_000 + 30_000).toISOString();
    const pause = { until, reason: 'usage limit, resets at then', since: ago(60_000) };
    const probe = { file, noun: 'docs', since: ago(60_000) };
    await writeFile(
      join(root, 'sessions', '.engine', 'pause.json'),
      JSON.stringify({ ...pause, probe }),
    );
    const json = await runCli(['status', '--json', '--root', root]);
    const report = JSON.parse(json.stdout) as Json & { paused: unknown };
    expect(report.daemon.state).toBe('none');
    expect(report.paused).toEqual({ ...pause, probe });
    expect(report.waiting).toEqual([
      expect.objectContaining({ file, wait: { kind: 'paused', until, probe: file } }),
    ]);
    const text = (await runCli(['status', '--root', root])).stdout.replace(/\s+/g, ' ');
    expect(text).toContain(
      'Daemon: none runs on this root, so nothing is dispatched (engine run starts one)',
    );
    expect(text).toContain(
      'Paused (lifts in 10 min): usage limit, resets at then; probe sessions/W.md; engine resume lifts it',
    );
    expect(text).toContain('paused by a usage limit, lifts in 10 min');
  });
});
