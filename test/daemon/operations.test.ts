import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  agentStarts,
  makeRoot,
  release,
  startDaemon,
  waitForReady,
  type DaemonProcess,
  type TestRoot,
} from '../helpers/daemon-harness.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

let t: TestRoot;
let daemons: DaemonProcess[] = [];

afterEach(async () => {
  for (const d of daemons) if (d.child.exitCode === null) await d.kill9();
  daemons = [];
  await t?.cleanup();
});

function start(extra: string[] = [], env: Record<string, string> = {}): DaemonProcess {
  const d = startDaemon(t, extra, env);
  daemons.push(d);
  return d;
}

const done = (file: string) =>
  waitFor(async () => (await readFile(file, 'utf8')).includes('#done-'));

describe('daemon operations', () => {
  it('--dry-run prints the dispatch order and changes nothing', async () => {
    t = await makeRoot();
    const files = {
      'a.md': '# A\n**Tags**: #delegated-chores\n',
      'b.md': '# B\n**Tags**: #delegated-fix #P0\n',
      'c.md': '# C\n**Tags**: #delegated-implementation\n',
    };
    for (const [name, text] of Object.entries(files)) await writeFile(join(t.sessions, name), text);
    const d = start(['--dry-run', '--debounce-ms', '0']);
    expect(await d.exited).toBe(0);
    const lines = d
      .output()
      .split('\n')
      .filter((l) => /^\d+\. /.test(l));
    expect(lines.map((l) => l.split(/\s+/)[1]?.split('/').pop())).toEqual(['b.md', 'c.md', 'a.md']);
    for (const [name, text] of Object.entries(files)) {
      expect(await readFile(join(t.sessions, name), 'utf8')).toBe(text);
    }
    expect(agentStarts(t)).toEqual([]);
  });

  it('with --no-watch, the reconcile pass alone finds new work', async () => {
    t = await makeRoot();
    const d = start(['--no-watch', '--rescan-interval-ms', '300']);
    await waitForReady(d);
    const file = join(t.sessions, 'LATE.md');
    await writeFile(file, '# L\n**Tags**: #delegated-fix\n');
    await done(file);
  });

  it('records the lifecycle in the event log and shows it in engine status', async () => {
    t = await makeRoot();
    await writeFile(join(t.sessions, 'WAITING.md'), '# W\n**Tags**: #delegated-manual\n');
    const d = start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = join(t.sessions, 'REQ.md');
    await writeFile(file, '# R\n**Tags**: #delegated-fix\n');
    const [agent] = await waitFor(() => agentStarts(t).length === 1 && agentStarts(t));

    const running = await waitFor(async () => {
      const status = await runCli(['status', '--json', '--root', t.root]);
      const report = JSON.parse(status.stdout);
      return report.running.length === 1 ? report : null;
    });
    expect(running.running[0]).toMatchObject({ file, noun: 'fix', alive: true, status: 'running' });
    expect(running.waiting).toEqual([
      expect.objectContaining({ noun: 'manual', dispatchable: false }),
    ]);

    await release(agent!.session);
    await done(file);
    const events = await waitFor(async () => {
      const raw = await readFile(join(t.sessions, '.engine', 'events.jsonl'), 'utf8');
      const list = raw
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { event: string; file?: string });
      const events = list.filter((e) => e.file === file).map((e) => e.event);
      return events.includes('done') && events.includes('exited') ? events : null;
    });
    // The agent marks done, then exits: the daemon may see either first.
    expect(events.slice(0, 2)).toEqual(['claimed', 'spawned']);
    expect(events.slice(2).sort()).toEqual(['done', 'exited']);
    const text = await runCli(['status', '--root', t.root]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Running (0)');
    expect(text.stdout).toMatch(/done\s+.*REQ\.md/);
  });

  it('refuses to start when the agent program is not on PATH', async () => {
    t = await makeRoot();
    const d = start(['--agent-cmd', 'no-such-agent-program {file}']);
    expect(await d.exited).toBe(1);
    expect(d.output()).toContain("ERROR: The agent program 'no-such-agent-program' is not on PATH");
  });

  it('writes JSON log lines with --log-format json', async () => {
    t = await makeRoot();
    const d = start(['--log-format', 'json']);
    await waitFor(() => d.output().includes('monitoring '));
    const file = join(t.sessions, 'REQ.md');
    await writeFile(file, '# R\n**Tags**: #delegated-fix\n');
    await done(file);
    await waitFor(() => d.output().includes('"msg":"done:'));
    for (const line of d.output().trim().split('\n')) {
      expect(JSON.parse(line)).toEqual(
        expect.objectContaining({ level: expect.any(String), msg: expect.any(String) }),
      );
    }
  });

  it('runs agents under node-pty with --runner pty and keeps the transcript', async () => {
    t = await makeRoot();
    const d = start(['--runner', 'pty']);
    await waitForReady(d);
    const file = join(t.sessions, 'REQ.md');
    await writeFile(file, '# R\n**Tags**: #delegated-fix\n');
    await done(file);
    const [agent] = agentStarts(t);
    await waitFor(() => existsSync(join(agent!.session, 'transcript.log')));
  });
});
