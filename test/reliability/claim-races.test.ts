/**
 * Claim races. K separate processes (K = 2, 8, 32) race `engine tag swap FILE '#delegated-x'
 * '#claimed-x'` on one file, round after round; and two daemons forced onto one root (the
 * single-instance lock bypassed) race over many items. Figure: double claims, which must be 0.
 */
import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { events, read, tagsOf, useDaemonHarness, waitForReady } from '../helpers/daemon-harness.js';
import { warmRacer } from '../helpers/racer.js';
import { waitFor } from '../helpers/wait-for.js';
import { countBy, FAST, recordFigure, scale, TORTURE } from './support.js';

const s = useDaemonHarness(FAST);

const INITIAL = '# Item\n**Tags**: #P1 #delegated-x\n\nHuman text mentions #delegated-x.\n';
const SWAP = ['tag', 'swap', 'item.md', '#delegated-x', '#claimed-x'];

describe('K processes race to claim one item', () => {
  for (const [k, rounds] of [
    [2, scale(40, 1000)],
    [8, scale(20, 300)],
    [32, scale(4, 100)],
  ] as const) {
    it(`K=${k}: exactly one claim per round over ${rounds} rounds`, async () => {
      const racers = Array.from({ length: k }, () =>
        warmRacer(s.sessions, (child) => s.children.track(child)),
      );
      await Promise.all(racers.map((r) => r.ready));
      let doubles = 0;
      let none = 0;
      for (let round = 0; round < rounds; round++) {
        await writeFile(s.file('item.md'), INITIAL);
        const results = await Promise.all(racers.map((r) => r.run(round, SWAP)));
        const winners = results.filter((r) => r.code === 0).length;
        if (winners > 1) doubles++;
        if (winners === 0) none++;
        const tags = tagsOf(await read(s.file('item.md')));
        if (tags.filter((t) => t === '#claimed-x').length !== 1 || tags.includes('#delegated-x'))
          doubles++;
      }
      recordFigure('claim-race', { k, rounds, doubleClaims: doubles, noClaim: none });
      expect({ doubles, none }).toEqual({ doubles: 0, none: 0 });
    }, 600_000);
  }
});

describe('two daemons forced onto one root', () => {
  const items = scale(20, 200);
  it(`claim each of ${items} items once, and run one agent for each`, async () => {
    const env = { ENGINE_UNSAFE_NO_LOCK: '1' };
    // A long grace: on a loaded 2-core machine a wrapper may need seconds to record its pid.
    const opts = ['--max-agents', '6', '--debounce-ms', '50', '--claim-grace-ms', '60000'];
    const a = s.start(opts, env);
    const b = s.start(opts, env);
    await Promise.all([waitForReady(a), waitForReady(b)]);
    const files = Array.from({ length: items }, (_, i) => s.file(`ITEM-${i}.md`));
    await Promise.all(files.map((f) => writeFile(f, '# R\n**Tags**: #delegated-fix\n')));
    for (const f of files) {
      await waitFor(async () => tagsOf(await read(f)).includes('#done-fix'), {
        timeoutMs: TORTURE ? 600_000 : 60_000,
        message: `${f} done`,
      });
    }
    const claims = countBy(
      events(s.root).filter((e) => e.event === 'claimed'),
      (e) => e.file ?? '',
    );
    const agents = countBy(s.agents(), (a) => a.file);
    const doubleClaims = files.filter((f) => (claims.get(f) ?? 0) > 1).length;
    const doubleAgents = files.filter((f) => (agents.get(f) ?? 0) > 1).length;
    const byDaemon = countBy(
      [a, b].flatMap((d, i) => (d.output().match(/claimed /g) ?? []).map(() => String(i))),
      (x) => x,
    );
    recordFigure('two-daemons', {
      items,
      doubleClaims,
      doubleAgents,
      claimsByA: byDaemon.get('0') ?? 0,
      claimsByB: byDaemon.get('1') ?? 0,
    });
    expect({ doubleClaims, doubleAgents }).toEqual({ doubleClaims: 0, doubleAgents: 0 });
    expect(files.every((f) => claims.get(f) === 1 && agents.get(f) === 1)).toBe(true);
    expect(a.child.exitCode).toBeNull();
    expect(b.child.exitCode).toBeNull();
  }, 900_000);
});
