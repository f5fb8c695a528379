import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { readProcessIdentity } from '../../src/process/process-identity.js';
import { craftClaim, craftedState } from '../helpers/crafted-state.js';
import {
  read,
  recoveries,
  release,
  useDaemonHarness,
  waitForReady,
  waitForState,
  waitForText,
} from '../helpers/daemon-harness.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

const h = useDaemonHarness();

describe('recovery of dead claims', () => {
  it('requeues to #needs-X with one ## Recovery entry when the agent is killed mid-work', async () => {
    const d = h.start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = await h.request('REQ.md', '# R\n**Tags**: #delegated-implementation\n');
    const [agent] = await h.waitForAgents(1);
    process.kill(agent!.pid, 'SIGKILL');
    const text = await waitForText(file, '#needs-implementation');
    expect(recoveries(text)).toBe(1);
    expect(text).toMatch(
      /\*\*Reason\*\*: agent exited with code 137 without marking `#done-implementation`/,
    );
    expect(text).toContain(`**Prior Session**: sessions/`);
    expect(text).not.toContain('#claimed-implementation');
    expect(text).not.toContain('**Session**:');
    // The requeue writes the request file first, then marks the session.
    await waitForState(
      agent!.session,
      (state) => state.status === 'abandoned',
      'the session to be marked abandoned',
    );
  });

  it('a failed item never reads as done: `await-tag #done-fix && echo finished` (docs/CLI.md) waits on', async () => {
    // The test agent's `exit` mode exits 3 without marking done: once back to #delegated-X, then
    // to #needs-X, two Recovery entries naming #done-fix, #delegated-fix and #needs-fix.
    const d = h.start(['--retries', '1', '--retry-backoff-ms', '100'], { TEST_AGENT_MODE: 'exit' });
    await waitForReady(d);
    const file = await h.request('REQ.md', '# R\n**Tags**: #delegated-fix\n');
    const text = await waitForText(file, (now) => recoveries(now) === 2, {
      message: `two requeues; ${d.output()}`,
    });
    expect(text).toContain('without marking `#done-fix`; retry 1 of 1');
    expect(text).toContain('Back to `#delegated-fix`, dispatched again');
    const cli = (...args: string[]) => runCli(args, { cwd: h.root });
    const waited = await cli('await-tag', file, '#done-fix', '--timeout', '0.5');
    expect(waited.code).toBe(1);
    expect(waited.stderr).toContain(`Timed out after 0.5 s waiting for '#done-fix'`);
    expect((await cli('tag', 'find', '#done-*')).stdout).toBe('');
    expect((await cli('tag', 'find', '#delegated-*')).stdout).toBe('');
    expect((await cli('tag', 'approve', '--list')).stdout).toBe(
      'sessions/REQ.md:2  #needs-fix  (Tags line)  R\n',
    );
  });

  it('treats a pid now used by another process as dead', async () => {
    const sleeper = h.children.spawn('sleep', ['60']);
    const real = await waitFor(() => readProcessIdentity(sleeper.pid!));
    const ref = 'sessions/2026_01_01_000000_FIX_req_abcd';
    const file = await craftClaim(
      h.root,
      'REQ.md',
      ref,
      craftedState(h.root, h.file('REQ.md'), ref, {
        pid: sleeper.pid,
        startTicks: String(Number(real.startTicks) - 1000),
        bootId: real.bootId,
      }),
    );
    const d = h.start(['--once']);
    expect(await d.exited).toBe(0);
    const text = await read(file);
    expect(text).toContain('#needs-fix');
    expect(text).toMatch(/\*\*Reason\*\*: .*another process/);
    expect(sleeper.exitCode).toBeNull();
  });

  it('requeues a claim whose session never got a record, after the grace period', async () => {
    const file = await h.request(
      'REQ.md',
      '# R\n**Tags**: #claimed-fix\n**Session**: sessions/2020_01_01_000000_FIX_req_abcd\n',
    );
    const d = h.start(['--once', '--claim-grace-ms', '1000']);
    expect(await d.exited).toBe(0);
    const text = await read(file);
    expect(text).toContain('#needs-fix');
    expect(text).toMatch(/no session record/);
  });

  it("leaves a claim without a Session line (not the daemon's) alone", async () => {
    const file = await h.request('REQ.md', '# R\n**Tags**: #claimed-fix\n');
    const d = h.start(['--once', '--claim-grace-ms', '0']);
    expect(await d.exited).toBe(0);
    expect(await read(file)).toBe('# R\n**Tags**: #claimed-fix\n');
  });

  it('after kill -9 and restart, dispatches nothing twice and loses nothing', async () => {
    const files = ['A', 'B', 'C', 'D'].map((n) => h.file(`${n}.md`));
    const first = h.start(['--max-agents', '2'], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(first);
    for (const f of files) await writeFile(f, '# R\n**Tags**: #delegated-fix\n');
    await waitFor(() => h.agents().length === 2);
    await first.kill9();

    const second = h.start(['--max-agents', '2'], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(second);
    expect(second.output()).toMatch(/adopted running agent/);
    for (let done = 0; done < files.length; done++) {
      const starts = await waitFor(() => h.agents().length > done && h.agents());
      // The adopted agents hold their slots: never more than the cap at once.
      expect(starts.length).toBeLessThanOrEqual(done + 2);
      await release(starts[done]!.session);
    }
    for (const f of files) await waitForText(f, '#done-fix');
    const starts = h.agents();
    expect(starts.map((s) => s.file).sort()).toEqual([...files].sort());
  });

  it('with --max-agents 1 runs #P0 before #P2, and table priority breaks ties', async () => {
    const d = h.start(['--max-agents', '1'], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    await h.request('BLOCKER.md', '# B\n**Tags**: #delegated-fix\n');
    const [first] = await h.waitForAgents(1);
    const items = {
      'P2-fix': '#delegated-fix #P2',
      'P0-chores': '#delegated-chores #P0',
      'P1-chores': '#delegated-chores #P1',
      'P1-fix': '#delegated-fix #P1',
      'none-loop': '#delegated-loop',
    };
    for (const [name, tags] of Object.entries(items)) {
      await writeFile(h.file(`${name}.md`), `# ${name}\n**Tags**: ${tags}\n`);
    }
    // Wait until every item has been read and queued behind the blocker.
    await waitFor(() => (d.output().match(/queued /g) ?? []).length >= 5, {
      message: `5 queued; ${d.output()}`,
    });
    await release(first!.session);
    for (let i = 1; i <= 5; i++) {
      const starts = await waitFor(() => h.agents().length > i && h.agents());
      await release(starts[i]!.session);
    }
    const order = h
      .agents()
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
