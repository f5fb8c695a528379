/**
 * `engine status`, `attach` and `logs --follow` judge claims with the project's settings
 * (directives/engine.json, read by the daemon's loader), not the defaults, so they agree with the
 * daemon; and status names the §TAG_DISPATCH table it really used.
 */
import { spawn } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SHIPPED_TAGS } from '../../src/cli/paths.js';
import { craftedState } from '../helpers/crafted-state.js';
import { TEST_TAGS_MD } from '../helpers/daemon-harness.js';
import { CLI } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';
import { Children } from '../process/spawned.js';
import { engine, expectError, makeTempDir, type TempDir } from './fixtures.js';

let t: TempDir;
const children = new Children();

beforeEach(async () => {
  t = await makeTempDir('engine-settings-');
  await mkdir(t.path('directives'));
  await mkdir(t.path('sessions'));
  await writeFile(t.path('directives', 'TAGS.md'), TEST_TAGS_MD);
});
afterEach(async () => {
  await children.killAll();
  await t.cleanup();
});

const engineJson = (settings: Record<string, unknown>) =>
  writeFile(t.path('directives', 'engine.json'), JSON.stringify(settings));

/** `sessions/<name>.md` claimed by a session whose record `over` crafts; resolves to the file. */
async function claim(name: string, over: Record<string, unknown>): Promise<string> {
  const ref = `sessions/2026_11_22_080000_FIX_${name}_0001`;
  const file = t.path('sessions', `${name}.md`);
  await writeFile(file, `# ${name}\n**Tags**: #claimed-fix\n**Session**: ${ref}\n`);
  await mkdir(t.path(ref));
  await writeFile(t.path(ref, '.state.json'), JSON.stringify(craftedState(t.dir, file, ref, over)));
  return file;
}

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

/** The files `engine status --json` lists as running and as stale. */
async function judged(): Promise<{ running: string[]; stale: string[] }> {
  const result = await engine(t.dir, ['status', '--json']);
  expect(result.code, result.stderr).toBe(0);
  const report = JSON.parse(result.stdout) as Record<'running' | 'stale', Array<{ file: string }>>;
  return { running: report.running.map((c) => c.file), stale: report.stale.map((c) => c.file) };
}

describe("engine status judges with the project's settings", () => {
  it('claimGraceMs in engine.json makes a starting claim alive, or dead', async () => {
    // Starting for 2 minutes: dead within the default 60 s grace, alive within 10 minutes.
    const file = await claim('slow', { status: 'starting', startedAt: ago(120_000) });
    expect(await judged()).toEqual({ running: [], stale: [file] });
    await engineJson({ claimGraceMs: 600_000 });
    expect(await judged()).toEqual({ running: [file], stale: [] });
  });

  it("staleAfter in engine.json makes another host's claim dead", async () => {
    const remote = { host: 'elsewhere', pid: 4100, startTicks: '100', bootId: 'b' };
    const file = await claim('remote', { ...remote, lastHeartbeat: ago(10 * 60_000) });
    expect(await judged()).toEqual({ running: [file], stale: [] });
    await engineJson({ staleAfter: 5 });
    expect(await judged()).toEqual({ running: [], stale: [file] });
  });

  it('refuses a bad engine.json, as the daemon does', async () => {
    await engineJson({ claimGraceMs: -1 });
    expectError(
      await engine(t.dir, ['status']),
      `${t.path('directives', 'engine.json')}: "claimGraceMs" must be a whole number of milliseconds from 0 to 2147483647, got -1`,
    );
  });
});

describe('engine status names the §TAG_DISPATCH table it used', () => {
  it("the project's directives/TAGS.md, or the table shipped with engine", async () => {
    await engineJson({});
    const own = await engine(t.dir, ['status', '--json']);
    expect(JSON.parse(own.stdout)).toMatchObject({
      table: { path: t.path('directives', 'TAGS.md'), shipped: false },
    });
    await rm(t.path('directives', 'TAGS.md'));
    const shipped = await engine(t.dir, ['status', '--json']);
    expect(JSON.parse(shipped.stdout)).toMatchObject({
      table: { path: SHIPPED_TAGS, shipped: true },
    });
    const text = await engine(t.dir, ['status']);
    expect(text.stdout.split('\nDaemon')[0]?.replace(/\s+/g, ' ')).toBe(
      `Project ${t.dir} §TAG_DISPATCH from ${SHIPPED_TAGS} (shipped with engine: the project has no directives/TAGS.md) Requests read under sessions/`,
    );
  });
});

describe("engine attach and logs judge with the project's settings", () => {
  it('attach: a starting claim within the claimGraceMs of engine.json is alive', async () => {
    const file = await claim('slow', { status: 'starting', startedAt: ago(120_000) });
    const ref = 'sessions/2026_11_22_080000_FIX_slow_0001';
    expectError(
      await engine(t.dir, ['attach', file]),
      `Session ${ref} has no live agent: the agent never started (${ref} stayed 'starting')`,
    );
    await engineJson({ claimGraceMs: 600_000 });
    expectError(
      await engine(t.dir, ['attach', file]),
      `Session ${ref} has no tmux window (runner tmux, status starting)`,
    );
  });

  it('logs --follow: a session past the claimGraceMs of engine.json has ended', async () => {
    // Alive for 50 s more by the default 60 s grace; ended by the project's 1 s.
    await engineJson({ claimGraceMs: 1000 });
    const file = await claim('slow', { status: 'starting', startedAt: ago(10_000) });
    await writeFile(t.path('sessions/2026_11_22_080000_FIX_slow_0001', 'agent.log'), 'hello\n');
    const child = children.track(
      spawn(process.execPath, [CLI, 'logs', '--follow', file], {
        cwd: t.dir,
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let out = '';
    let code: number | null | undefined;
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.on('exit', (exitCode) => (code = exitCode));
    await waitFor(() => code !== undefined, {
      timeoutMs: 20_000,
      message: () => `engine logs --follow to end; output so far: ${out}`,
    });
    expect({ code, out }).toEqual({ code: 0, out: 'hello\n' });
  });
});
