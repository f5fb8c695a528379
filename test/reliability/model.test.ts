/**
 * A property-based model test (fast-check): random sequences of human edits and approvals, agent
 * successes and deaths, daemon crashes (kill -9) and restarts, run against the real daemon, and
 * compared after every step with a small reference model of the lifecycle
 * (#needs → #delegated → #claimed → #done, a dead claim → #needs). Invariants: at most one live
 * agent per item, a #needs item is never dispatched, no human line is ever lost, every dead claim
 * is requeued within one reap interval (plus the time to notice and write), and the files always
 * agree with the model.
 *
 * Every sequence crashes the daemon and kills a claimed agent at least once (a random sequence
 * rarely kills one on its own), each sequence ends with the daemon running so a claim that died
 * while it was down is checked too, and a fixed example walks every transition. The test counts
 * what each run actually did and demands at least one agent death and one daemon crash per run,
 * so a change to the generator cannot silently stop exercising them.
 */
import { appendFile, writeFile } from 'node:fs/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DaemonHarness,
  isAlive,
  read,
  release,
  tagsOf,
  waitForReady,
  type DaemonProcess,
} from '../helpers/daemon-harness.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';
import { FAST, recordFigure, scale } from './support.js';

type State = 'needs' | 'delegated' | 'claimed' | 'dead' | 'done';
type Command =
  | { t: 'approve'; i: number }
  | { t: 'edit'; i: number }
  | { t: 'finish'; i: number }
  | { t: 'kill-agent'; i: number }
  | { t: 'crash' }
  | { t: 'restart' };

/** The reference model: each item's lifecycle state, and whether the daemon runs. */
interface Model {
  items: State[];
  daemonUp: boolean;
}

const ITEMS = 2;
const REAP_MS = 300;
/** One reap interval, plus polling, reading and writing on a loaded 2-core machine. */
const REQUEUE_BOUND_MS = REAP_MS + 2500;

const initialModel = (): Model => ({ items: Array<State>(ITEMS).fill('needs'), daemonUp: true });

/** What a command does to the model. A command that does not apply leaves it unchanged. */
function next(m: Model, c: Command): Model {
  const items = [...m.items];
  switch (c.t) {
    case 'approve':
      if (items[c.i] === 'needs') items[c.i] = m.daemonUp ? 'claimed' : 'delegated';
      return { items, daemonUp: m.daemonUp };
    case 'finish':
      if (items[c.i] === 'claimed') items[c.i] = 'done';
      return { items, daemonUp: m.daemonUp };
    case 'kill-agent':
      if (items[c.i] === 'claimed') items[c.i] = m.daemonUp ? 'needs' : 'dead';
      return { items, daemonUp: m.daemonUp };
    case 'crash':
      return { items, daemonUp: false };
    case 'restart':
      if (m.daemonUp) return m;
      return {
        items: items.map((s) => (s === 'dead' ? 'needs' : s === 'delegated' ? 'claimed' : s)),
        daemonUp: true,
      };
    case 'edit':
      return m;
  }
}

/** The model before each command of a sequence, and after the last. */
function modelsAlong(commands: Command[]): Model[] {
  const models = [initialModel()];
  for (const c of commands) models.push(next(models.at(-1)!, c));
  return models;
}

const insert = (commands: Command[], k: number, added: Command[]): Command[] => [
  ...commands.slice(0, k),
  ...added,
  ...commands.slice(k),
];

/**
 * The sequence with a daemon crash in it: unchanged if it has one (the daemon runs until the
 * first crash, so that one always applies), otherwise with a crash inserted at the latest point
 * at or before `at` where an agent holds a claim, or at `at` if there is none.
 */
function withDaemonCrash(commands: Command[], at: number): Command[] {
  if (commands.some((c) => c.t === 'crash')) return commands;
  const models = modelsAlong(commands);
  const from = Math.min(at, commands.length);
  for (let k = from; k > 0; k--)
    if (models[k]!.items.includes('claimed')) return insert(commands, k, [{ t: 'crash' }]);
  return insert(commands, from, [{ t: 'crash' }]);
}

/**
 * The sequence with a claimed agent killed in it: unchanged if it already kills one, otherwise
 * with a kill (and the approval it needs) inserted at the latest point at or before `at` where
 * one applies. At the start both items wait and the daemon runs, so one always does.
 */
function withAgentDeath(commands: Command[], at: number): Command[] {
  const models = modelsAlong(commands);
  if (commands.some((c, k) => c.t === 'kill-agent' && models[k]!.items[c.i] === 'claimed'))
    return commands;
  for (let k = Math.min(at, commands.length); k > 0; k--) {
    const m = models[k]!;
    const claimed = m.items.indexOf('claimed');
    if (claimed >= 0) return insert(commands, k, [{ t: 'kill-agent', i: claimed }]);
    const waiting = m.items.indexOf('needs');
    if (m.daemonUp && waiting >= 0)
      return insert(commands, k, [
        { t: 'approve', i: waiting },
        { t: 'kill-agent', i: waiting },
      ]);
  }
  return insert(commands, 0, [
    { t: 'approve', i: 0 },
    { t: 'kill-agent', i: 0 },
  ]);
}

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ t: fc.constant('approve' as const), i: fc.nat(ITEMS - 1) }),
  fc.record({ t: fc.constant('edit' as const), i: fc.nat(ITEMS - 1) }),
  fc.record({ t: fc.constant('finish' as const), i: fc.nat(ITEMS - 1) }),
  fc.record({ t: fc.constant('kill-agent' as const), i: fc.nat(ITEMS - 1) }),
  fc.constant({ t: 'crash' as const }),
  fc.constant({ t: 'restart' as const }),
);

/** The crash goes in first: inserting a kill never undoes a crash, but a crash can undo a kill. */
const sequence: fc.Arbitrary<Command[]> = fc
  .tuple(
    fc.array(command, { minLength: 3, maxLength: scale(8, 20) }),
    fc.nat(scale(8, 20)),
    fc.nat(scale(8, 20)),
  )
  .map(([commands, crashAt, killAt]) => withAgentDeath(withDaemonCrash(commands, crashAt), killAt));

/**
 * Run first on every run: an agent killed under a running daemon, one killed while the daemon is
 * down, an approval while it is down, human lines, and both items finished.
 */
const EVERY_TRANSITION: Command[] = [
  { t: 'approve', i: 0 },
  { t: 'edit', i: 0 },
  { t: 'kill-agent', i: 0 },
  { t: 'approve', i: 1 },
  { t: 'crash' },
  { t: 'kill-agent', i: 1 },
  { t: 'approve', i: 0 },
  { t: 'edit', i: 1 },
  { t: 'restart' },
  { t: 'finish', i: 0 },
  { t: 'approve', i: 1 },
  { t: 'finish', i: 1 },
];

/** What the runs actually did; recorded as figures, and checked against minimums at the end. */
const stats = {
  runs: 0,
  steps: 0,
  violations: 0,
  claims: 0,
  agentDeaths: 0,
  agentDeathsWhileDaemonDown: 0,
  daemonCrashes: 0,
  restarts: 0,
  requeues: 0,
  dones: 0,
  worstRequeueMs: 0,
};

async function runSequence(commands: Command[]): Promise<void> {
  const s = await DaemonHarness.open(FAST);
  try {
    const files = Array.from({ length: ITEMS }, (_, i) => s.file(`ITEM-${i}.md`));
    let model = initialModel();
    const lines: string[][] = files.map(() => []);
    const everApproved = files.map(() => false);
    /** Agents the model has started per item: one per claim, never more. */
    const started = files.map(() => 0);
    for (const f of files) await writeFile(f, '# R\n**Tags**: #needs-fix\n\nHuman text.\n');
    const env = { TEST_AGENT_MODE: 'hold' };
    const opts = ['--reap-interval-ms', String(REAP_MS), '--claim-grace-ms', '30000'];
    let daemon: DaemonProcess | null = s.start(opts, env);
    await waitForReady(daemon);
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
      started[i]!++;
      stats.claims++;
    };
    const timedRequeue = async (i: number) => {
      const start = Date.now();
      await waitTag(i, '#needs-fix', 20_000);
      const took = Date.now() - start;
      stats.worstRequeueMs = Math.max(stats.worstRequeueMs, took);
      expect(took, `dead claim of ITEM-${i} requeued within one reap interval`).toBeLessThan(
        REQUEUE_BOUND_MS,
      );
      stats.requeues++;
    };

    // Ending with a restart checks that a claim that died while the daemon was down is requeued.
    for (const c of [...commands, { t: 'restart' } as const]) {
      stats.steps++;
      const before = model;
      model = next(model, c);
      switch (c.t) {
        case 'approve': {
          if (before.items[c.i] !== 'needs') break;
          const agents = agentsOf(c.i).length;
          const r = await runCli(['tag', 'approve', files[c.i]!, '--to', 'delegated']);
          expect(r.code, r.stderr).toBe(0);
          everApproved[c.i] = true;
          if (model.items[c.i] === 'claimed') await waitClaimed(c.i, agents);
          break;
        }
        case 'edit': {
          const line = `human line ${lines[c.i]!.length}`;
          await appendFile(files[c.i]!, `${line}\n`);
          lines[c.i]!.push(line);
          break;
        }
        case 'finish': {
          if (before.items[c.i] !== 'claimed') break;
          await release(agentsOf(c.i).at(-1)!.session);
          await waitTag(c.i, '#done-fix');
          stats.dones++;
          break;
        }
        case 'kill-agent': {
          if (before.items[c.i] !== 'claimed') break;
          process.kill(agentsOf(c.i).at(-1)!.pid, 'SIGKILL');
          stats.agentDeaths++;
          if (model.daemonUp) await timedRequeue(c.i);
          else stats.agentDeathsWhileDaemonDown++;
          break;
        }
        case 'crash': {
          if (!daemon) break;
          await daemon.kill9();
          daemon = null;
          stats.daemonCrashes++;
          break;
        }
        case 'restart': {
          if (daemon) break;
          const agents = files.map((_, i) => agentsOf(i).length);
          daemon = s.start(opts, env);
          await waitForReady(daemon);
          stats.restarts++;
          for (let i = 0; i < ITEMS; i++) {
            if (before.items[i] === 'dead') await timedRequeue(i);
            else if (before.items[i] === 'delegated') await waitClaimed(i, agents[i]!);
          }
          break;
        }
      }
      // Invariants after every step.
      for (let i = 0; i < ITEMS; i++) {
        const agents = agentsOf(i);
        expect(
          agents.filter((a) => isAlive(a.pid)).length,
          `one live agent at most for ITEM-${i}`,
        ).toBeLessThanOrEqual(1);
        if (!everApproved[i]) expect(agents, `#needs ITEM-${i} never dispatched`).toEqual([]);
        expect(agents.length, `one agent per claim of ITEM-${i}`).toBe(started[i]);
        const text = await read(files[i]!);
        for (const line of lines[i]!) expect(text, `human line kept in ITEM-${i}`).toContain(line);
        expect(text, `first human line kept in ITEM-${i}`).toContain('Human text.');
        const state = model.items[i];
        const want = state === 'dead' ? 'claimed' : state;
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
    await fc.assert(fc.asyncProperty(sequence, runSequence), {
      examples: [[EVERY_TRANSITION]],
      numRuns: 1 + scale(4, 40),
      endOnFailure: true,
    });
    recordFigure('model', { ...stats });
    expect(stats.runs).toBe(1 + scale(4, 40));
    expect(stats.agentDeaths, 'agent deaths, one per run at least').toBeGreaterThanOrEqual(
      stats.runs,
    );
    expect(stats.daemonCrashes, 'daemon crashes, one per run at least').toBeGreaterThanOrEqual(
      stats.runs,
    );
    expect(stats.restarts, 'every crash restarted').toBe(stats.daemonCrashes);
    expect(stats.requeues, 'every dead claim requeued').toBe(stats.agentDeaths);
    expect(stats.agentDeathsWhileDaemonDown, 'deaths while the daemon was down').toBeGreaterThan(0);
    expect(stats.dones, 'dones exercised').toBeGreaterThan(0);
  }, 900_000);
});
