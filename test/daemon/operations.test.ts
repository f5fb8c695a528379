import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  events,
  read,
  release,
  useDaemonHarness,
  waitForReady,
  waitForText,
} from '../helpers/daemon-harness.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

const h = useDaemonHarness();

const done = (file: string) => waitForText(file, '#done-');

describe('daemon operations', () => {
  it('--dry-run prints the dispatch order and changes nothing', async () => {
    const files = {
      'a.md': '# A\n**Tags**: #delegated-chores\n',
      'b.md': '# B\n**Tags**: #delegated-fix #P0\n',
      'c.md': '# C\n**Tags**: #delegated-implementation\n',
    };
    for (const [name, text] of Object.entries(files)) await writeFile(h.file(name), text);
    const d = h.start(['--dry-run', '--debounce-ms', '0']);
    expect(await d.exited).toBe(0);
    const lines = d
      .output()
      .split('\n')
      .filter((l) => /^\d+\. /.test(l));
    expect(lines.map((l) => l.split(/\s+/)[1]?.split('/').pop())).toEqual(['b.md', 'c.md', 'a.md']);
    for (const [name, text] of Object.entries(files)) {
      expect(await read(h.file(name))).toBe(text);
    }
    expect(h.agents()).toEqual([]);
  });

  it('with --no-watch, the reconcile pass alone finds new work', async () => {
    const d = h.start(['--no-watch', '--rescan-interval-ms', '300']);
    await waitForReady(d);
    const file = await h.request('LATE.md', '# L\n**Tags**: #delegated-fix\n');
    await done(file);
  });

  it('records the lifecycle in the event log and shows it in engine status', async () => {
    await writeFile(h.file('WAITING.md'), '# W\n**Tags**: #delegated-manual\n');
    const d = h.start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = await h.request('REQ.md', '# R\n**Tags**: #delegated-fix\n');
    const [agent] = await h.waitForAgents(1);

    const running = await waitFor(async () => {
      const status = await runCli(['status', '--json', '--root', h.root]);
      const report = JSON.parse(status.stdout);
      return report.running.length === 1 ? report : null;
    });
    expect(running.running[0]).toMatchObject({ file, noun: 'fix', alive: true, status: 'running' });
    // Its row says Daemon no: never dispatched, so it needs you rather than waits.
    expect(running.waiting).toEqual([]);
    expect(running.needsYou).toEqual([
      expect.objectContaining({ kind: 'not-dispatched', tags: ['#delegated-manual'] }),
    ]);

    await release(agent!.session);
    await done(file);
    const logged = await waitFor(() => {
      const names = events(h.root)
        .filter((e) => e.file === file)
        .map((e) => e.event);
      return names.includes('done') && names.includes('exited') ? names : null;
    });
    // The agent marks done, then exits: the daemon may see either first.
    expect(logged.slice(0, 2)).toEqual(['claimed', 'spawned']);
    expect(logged.slice(2).sort()).toEqual(['done', 'exited']);
    const text = await runCli(['status', '--root', h.root]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Running (0)');
    expect(text.stdout).toMatch(/done\s+.*REQ\.md/);
  });

  it('refuses to start when the agent program is not on PATH', async () => {
    const d = h.start(['--agent-cmd', 'no-such-agent-program {file}']);
    expect(await d.exited).toBe(1);
    expect(d.output()).toContain("ERROR: The agent program 'no-such-agent-program' is not on PATH");
  });

  it('answers --dry-run without the agent program installed: it starts no agent', async () => {
    await h.request('REQ.md', '# R\n**Tags**: #delegated-fix\n');
    const d = h.start(['--dry-run', '--agent-cmd', 'no-such-agent-program {file}']);
    expect(await d.exited, d.output()).toBe(0);
    expect(d.output()).toMatch(/^1\. .*REQ\.md {2}#delegated-fix/m);
  });

  it('writes JSON log lines with --log-format json', async () => {
    const d = h.start(['--log-format', 'json']);
    await waitForReady(d);
    const file = await h.request('REQ.md', '# R\n**Tags**: #delegated-fix\n');
    await done(file);
    await waitFor(() => d.output().includes('"msg":"done:'));
    for (const line of d.output().trim().split('\n')) {
      expect(JSON.parse(line)).toEqual(
        expect.objectContaining({ level: expect.any(String), msg: expect.any(String) }),
      );
    }
  });

  it('runs agents under node-pty with --runner pty and keeps the transcript', async () => {
    const d = h.start(['--runner', 'pty']);
    await waitForReady(d);
    const file = await h.request('REQ.md', '# R\n**Tags**: #delegated-fix\n');
    await done(file);
    const [agent] = h.agents();
    await waitFor(() => existsSync(join(agent!.session, 'agent.log')));
  });
});
