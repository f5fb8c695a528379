import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readProcessIdentity } from '../../src/process/process-identity.js';
import {
  agentStarts,
  makeRoot,
  release,
  startDaemon,
  waitForReady,
  type DaemonProcess,
  type TestRoot,
} from '../helpers/daemon-harness.js';
import { craftedState } from '../helpers/crafted-state.js';
import { waitFor } from '../helpers/wait-for.js';

let t: TestRoot;
let daemons: DaemonProcess[] = [];
const pids: number[] = [];

afterEach(async () => {
  for (const d of daemons) if (d.child.exitCode === null) await d.kill9();
  daemons = [];
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await t?.cleanup();
});

function start(extra: string[] = [], env: Record<string, string> = {}): DaemonProcess {
  const d = startDaemon(t, extra, env);
  daemons.push(d);
  return d;
}

const recoveries = (text: string) => text.split('\n').filter((l) => l === '## Recovery').length;

describe('recovery of dead claims', () => {
  it('requeues to #needs-X with one ## Recovery entry when the agent is killed mid-work', async () => {
    t = await makeRoot();
    const d = start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = join(t.sessions, 'REQ.md');
    await writeFile(file, '# R\n**Tags**: #delegated-implementation\n');
    const [agent] = await waitFor(() => agentStarts(t).length === 1 && agentStarts(t));
    process.kill(agent!.pid, 'SIGKILL');
    const text = await waitFor(async () => {
      const now = await readFile(file, 'utf8');
      return now.includes('#needs-implementation') ? now : null;
    });
    expect(recoveries(text)).toBe(1);
    expect(text).toMatch(
      /\*\*Reason\*\*: agent exited with code 137 without marking #done-implementation/,
    );
    expect(text).toContain(`**Prior Session**: sessions/`);
    expect(text).not.toContain('#claimed-implementation');
    expect(text).not.toContain('**Session**:');
    // The requeue writes the request file first, then marks the session.
    await waitFor(
      async () =>
        JSON.parse(await readFile(join(agent!.session, '.state.json'), 'utf8')).status ===
        'abandoned',
      { message: 'the session to be marked abandoned' },
    );
  });

  it('treats a pid now used by another process as dead', async () => {
    t = await makeRoot();
    const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
    pids.push(sleeper.pid!);
    const real = await waitFor(() => readProcessIdentity(sleeper.pid!));
    const ref = 'sessions/2026_01_01_000000_FIX_req_abcd';
    const dir = join(t.root, ref);
    await mkdir(dir);
    const file = join(t.sessions, 'REQ.md');
    await writeFile(file, `# R\n**Tags**: #claimed-fix\n**Session**: ${ref}\n`);
    await writeFile(
      join(dir, '.state.json'),
      JSON.stringify(
        craftedState(t.root, file, ref, {
          pid: sleeper.pid,
          startTicks: String(Number(real.startTicks) - 1000),
          bootId: real.bootId,
        }),
      ),
    );
    const d = start(['--once']);
    expect(await d.exited).toBe(0);
    const text = await readFile(file, 'utf8');
    expect(text).toContain('#needs-fix');
    expect(text).toMatch(/\*\*Reason\*\*: .*another process/);
    expect(sleeper.exitCode).toBeNull();
  });

  it('requeues a claim whose session never got a record, after the grace period', async () => {
    t = await makeRoot();
    const file = join(t.sessions, 'REQ.md');
    await writeFile(
      file,
      '# R\n**Tags**: #claimed-fix\n**Session**: sessions/2020_01_01_000000_FIX_req_abcd\n',
    );
    const d = start(['--once', '--claim-grace-ms', '1000']);
    expect(await d.exited).toBe(0);
    const text = await readFile(file, 'utf8');
    expect(text).toContain('#needs-fix');
    expect(text).toMatch(/no session record/);
  });

  it("leaves a claim without a Session line (not the daemon's) alone", async () => {
    t = await makeRoot();
    const file = join(t.sessions, 'REQ.md');
    await writeFile(file, '# R\n**Tags**: #claimed-fix\n');
    const d = start(['--once', '--claim-grace-ms', '0']);
    expect(await d.exited).toBe(0);
    expect(await readFile(file, 'utf8')).toBe('# R\n**Tags**: #claimed-fix\n');
  });

  it('after kill -9 and restart, dispatches nothing twice and loses nothing', async () => {
    t = await makeRoot();
    const files = ['A', 'B', 'C', 'D'].map((n) => join(t.sessions, `${n}.md`));
    const first = start(['--max-agents', '2'], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(first);
    for (const f of files) await writeFile(f, '# R\n**Tags**: #delegated-fix\n');
    await waitFor(() => agentStarts(t).length === 2);
    await first.kill9();

    const second = start(['--max-agents', '2'], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(second);
    expect(second.output()).toMatch(/adopted running agent/);
    for (let done = 0; done < files.length; done++) {
      const starts = await waitFor(() => agentStarts(t).length > done && agentStarts(t));
      // The adopted agents hold their slots: never more than the cap at once.
      expect(starts.length).toBeLessThanOrEqual(done + 2);
      await release(starts[done]!.session);
    }
    for (const f of files)
      await waitFor(async () => (await readFile(f, 'utf8')).includes('#done-fix'));
    const starts = agentStarts(t);
    expect(starts.map((s) => s.file).sort()).toEqual([...files].sort());
  });

  it('with --max-agents 1 runs #P0 before #P2, and table priority breaks ties', async () => {
    t = await makeRoot();
    const d = start(['--max-agents', '1'], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const blocker = join(t.sessions, 'BLOCKER.md');
    await writeFile(blocker, '# B\n**Tags**: #delegated-fix\n');
    const [first] = await waitFor(() => agentStarts(t).length === 1 && agentStarts(t));
    const items = {
      'P2-fix': '#delegated-fix #P2',
      'P0-chores': '#delegated-chores #P0',
      'P1-chores': '#delegated-chores #P1',
      'P1-fix': '#delegated-fix #P1',
      'none-loop': '#delegated-loop',
    };
    for (const [name, tags] of Object.entries(items)) {
      await writeFile(join(t.sessions, `${name}.md`), `# ${name}\n**Tags**: ${tags}\n`);
    }
    // Wait until every item has been read and queued behind the blocker.
    await waitFor(() => (d.output().match(/queued /g) ?? []).length >= 5, {
      message: `5 queued; ${d.output()}`,
    });
    await release(first!.session);
    for (let i = 1; i <= 5; i++) {
      const starts = await waitFor(() => agentStarts(t).length > i && agentStarts(t));
      await release(starts[i]!.session);
    }
    const order = agentStarts(t)
      .slice(1)
      .map((s) => s.file.split('/').pop());
    expect(order).toEqual([
      'P0-chores.md',
      'P1-fix.md',
      'P1-chores.md',
      'P2-fix.md',
      'none-loop.md',
    ]);
  });
});
