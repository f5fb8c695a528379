/**
 * A property-based model test (fast-check): random sequences of human edits and approvals, agent
 * successes and deaths, daemon crashes (kill -9) and restarts, run against the real daemon, and
 * compared after every step with a small reference model of the lifecycle
 * (#needs → #delegated → #claimed → #done, a dead claim → #needs). Invariants: at most one live
 * agent per item, a #needs item is never dispatched, no human line is ever lost, every dead claim
 * is requeued within one reap interval (plus the time to notice and write), and the files always
 * agree with the model.
 */
import { appendFile, writeFile } from 'node:fs/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { release, type DaemonProcess } from '../helpers/daemon-harness.js';
import { runCli } from '../helpers/run-cli.js';
import { read, recordFigure, scale, Scenario, tagsOf, waitFor } from './support.js';

type State = 'needs' | 'delegated' | 'claimed' | 'dead' | 'done';
type Command =
  | { t: 'approve'; i: number }
  | { t: 'edit'; i: number }
  | { t: 'finish'; i: number }
  | { t: 'kill-agent'; i: number }
  | { t: 'crash' }
  | { t: 'restart' };

const ITEMS = 2;
const REAP_MS = 300;
/** One reap interval, plus polling, reading and writing on a loaded 2-core machine. */
const REQUEUE_BOUND_MS = REAP_MS + 2500;

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ t: fc.constant('approve' as const), i: fc.nat(ITEMS - 1) }),
  fc.record({ t: fc.constant('edit' as const), i: fc.nat(ITEMS - 1) }),
  fc.record({ t: fc.constant('finish' as const), i: fc.nat(ITEMS - 1) }),
  fc.record({ t: fc.constant('kill-agent' as const), i: fc.nat(ITEMS - 1) }),
  fc.constant({ t: 'crash' as const }),
  fc.constant({ t: 'restart' as const }),
);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const stats = { runs: 0, steps: 0, violations: 0, worstRequeueMs: 0 };

async function runSequence(commands: Command[]): Promise<void> {
  const s = await Scenario.open();
  try {
    const files = Array.from({ length: ITEMS }, (_, i) => s.file(`ITEM-${i}.md`));
    const model: State[] = files.map(() => 'needs');
    const lines: string[][] = files.map(() => []);
    const everApproved = files.map(() => false);
    for (const f of files) await writeFile(f, '# R\n**Tags**: #needs-fix\n\nHuman text.\n');
    const env = { TEST_AGENT_MODE: 'hold' };
    const opts = ['--reap-interval-ms', String(REAP_MS), '--claim-grace-ms', '30000'];
    let daemon: DaemonProcess | null = s.start(opts, env);
    await waitFor(() => daemon!.output().includes('monitoring '));
    const agentsOf = (i: number) => s.agents().filter((a) => a.file === files[i]);
    const tagOf = async (i: number) =>
      tagsOf(await read(files[i]!)).find((t) => /^#(needs|delegated|claimed|done)-fix$/.test(t));
    const waitTag = (i: number, tag: string, timeoutMs = 20_000) =>
      waitFor(async () => (await tagOf(i)) === tag, {
        timeoutMs,
        message: `ITEM-${i} to carry ${tag}; ${daemon?.output().slice(-1500)}`,
      });
    const waitClaimed = async (i: number, before: number) => {
      await waitFor(() => agentsOf(i).length > before, {
        message: `an agent for ITEM-${i}; ${daemon?.output().slice(-1500)}`,
      });
      await waitTag(i, '#claimed-fix');
      model[i] = 'claimed';
    };
    const timedRequeue = async (i: number) => {
      const start = Date.now();
      await waitTag(i, '#needs-fix', 20_000);
      const took = Date.now() - start;
      stats.worstRequeueMs = Math.max(stats.worstRequeueMs, took);
      expect(took, `dead claim of ITEM-${i} requeued within one reap interval`).toBeLessThan(
        REQUEUE_BOUND_MS,
      );
      model[i] = 'needs';
    };

    for (const c of commands) {
      stats.steps++;
      switch (c.t) {
        case 'approve': {
          if (model[c.i] !== 'needs') break;
          const before = agentsOf(c.i).length;
          const r = await runCli(['tag', 'approve', files[c.i]!, '--to', 'delegated']);
          expect(r.code, r.stderr).toBe(0);
          everApproved[c.i] = true;
          model[c.i] = 'delegated';
          if (daemon) await waitClaimed(c.i, before);
          break;
        }
        case 'edit': {
          const line = `human line ${lines[c.i]!.length}`;
          await appendFile(files[c.i]!, `${line}\n`);
          lines[c.i]!.push(line);
          break;
        }
        case 'finish': {
          if (model[c.i] !== 'claimed') break;
          await release(agentsOf(c.i).at(-1)!.session);
          await waitTag(c.i, '#done-fix');
          model[c.i] = 'done';
          break;
        }
        case 'kill-agent': {
          if (model[c.i] !== 'claimed') break;
          process.kill(agentsOf(c.i).at(-1)!.pid, 'SIGKILL');
          if (daemon) await timedRequeue(c.i);
          else model[c.i] = 'dead';
          break;
        }
        case 'crash': {
          if (!daemon) break;
          await daemon.kill9();
          daemon = null;
          break;
        }
        case 'restart': {
          if (daemon) break;
          const before = files.map((_, i) => agentsOf(i).length);
          daemon = s.start(opts, env);
          await waitFor(() => daemon!.output().includes('monitoring '));
          for (let i = 0; i < ITEMS; i++) {
            if (model[i] === 'dead') await timedRequeue(i);
            else if (model[i] === 'delegated') await waitClaimed(i, before[i]!);
          }
          break;
        }
      }
      // Invariants after every step.
      for (let i = 0; i < ITEMS; i++) {
        const agents = agentsOf(i);
        expect(
          agents.filter((a) => alive(a.pid)).length,
          `one live agent at most for ITEM-${i}`,
        ).toBeLessThanOrEqual(1);
        if (!everApproved[i]) expect(agents, `#needs ITEM-${i} never dispatched`).toEqual([]);
        const text = await read(files[i]!);
        for (const line of lines[i]!) expect(text, `human line kept in ITEM-${i}`).toContain(line);
        expect(text).toContain('Human text.');
        const want = model[i] === 'dead' ? 'claimed' : model[i];
        expect(await tagOf(i), `ITEM-${i} agrees with the model`).toBe(`#${want}-fix`);
      }
      if (daemon) expect(daemon.child.exitCode, daemon.output()).toBeNull();
    }
  } catch (error) {
    stats.violations++;
    throw error;
  } finally {
    stats.runs++;
    await s.close();
  }
}

describe('model: random edits, claims, agent exits, crashes and restarts', () => {
  it('keeps every invariant on every run', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 3, maxLength: scale(8, 20) }), runSequence),
      { numRuns: scale(3, 40), endOnFailure: true },
    );
    recordFigure('model', { ...stats });
  }, 900_000);
});
