/**
 * PtyRunner with the real node-pty when it loads; otherwise the test asserts the clear error. The
 * missing-module path is also checked with an injected loader. Every process started is killed by
 * pid in afterAll.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../src/errors.js';
import { NODE_PTY_MISSING, PtyRunner, loadNodePty } from '../../src/runners/pty-runner.js';
import { waitFor } from '../helpers/wait-for.js';
import { killAll, processGone, readProbe, writeProbeAgent } from './support.js';

const loaded = await loadNodePty().then(
  () => null,
  (error: unknown) => error,
);

describe('loading node-pty', () => {
  it('gives the clear error when node-pty is missing', async () => {
    const missing = Object.assign(
      new Error("Cannot find package 'node-pty' imported from /x/pty-runner.js"),
      { code: 'ERR_MODULE_NOT_FOUND' },
    );
    const runner = new PtyRunner({ loadPty: () => Promise.reject(missing) });
    await expect(runner.ensureLoaded()).rejects.toThrow(EngineError);
    await expect(
      runner.launch({ name: 'x', argv: ['true'], cwd: tmpdir(), env: {} }),
    ).rejects.toThrow(NODE_PTY_MISSING);
    expect(NODE_PTY_MISSING).toBe(
      'node-pty is not installed: run `npm install node-pty` or use --runner tmux',
    );
  });

  it('says "could not be loaded" when node-pty is there but broken', async () => {
    const broken = new Error('Failed to load native module: pty.node');
    await expect(loadNodePty(() => Promise.reject(broken))).rejects.toThrow(
      /node-pty could not be loaded \(Failed to load native module: pty.node\)/,
    );
    await expect(loadNodePty(async () => ({ nothing: true }))).rejects.toThrow(/no spawn\(\)/);
  });

  it('retries the load after a failure (node-pty installed later)', async () => {
    let attempts = 0;
    const runner = new PtyRunner({
      loadPty: async () => {
        attempts += 1;
        if (attempts === 1)
          throw Object.assign(new Error("'node-pty'"), { code: 'MODULE_NOT_FOUND' });
        return { spawn: () => ({}) };
      },
    });
    await expect(runner.ensureLoaded()).rejects.toThrow(NODE_PTY_MISSING);
    await expect(runner.ensureLoaded()).resolves.toBeUndefined();
  });

  it.runIf(loaded !== null)(
    'fails with the clear error on this machine (node-pty does not load)',
    () => {
      expect(loaded).toBeInstanceOf(EngineError);
      expect((loaded as Error).message).toMatch(/node-pty (is not installed|could not be loaded)/);
    },
  );
});

describe.runIf(loaded === null)('PtyRunner with node-pty', () => {
  const pids = new Set<number>();
  let dir: string;
  let probe: string;
  let runner: PtyRunner;

  beforeAll(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'engine-pty-')));
    probe = writeProbeAgent(dir);
    runner = new PtyRunner({ stopGraceMs: 500 });
  });

  afterAll(async () => {
    killAll(pids);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs the argv (no shell), writes the transcript and observes the exit', async () => {
    const out = join(dir, 'report.json');
    const log = join(dir, 'transcript.log');
    const hostile = ['$(touch canary)', '; touch canary2', "it's", 'new\nline', '-e', '', 'x;'];
    const agent = await runner.launch({
      name: 'agent pty #1',
      argv: [process.execPath, probe, ...hostile],
      cwd: dir,
      env: { PROBE_OUT: out, PROBE_ENV: 'FOO,TMUX', FOO: 'bar' },
      logFile: log,
    });
    pids.add(agent.pid);
    expect(agent).toMatchObject({
      kind: 'pty',
      target: `pty:${agent.pid}`,
      windowName: 'agentpty1',
    });
    await waitFor(async () => !(await runner.isTargetAlive(agent.target)), {
      message: 'the exit to be observed',
    });
    // Dead means the transcript is complete and closed.
    expect(await readFile(log, 'utf8')).toContain('probe says hello');
    const seen = readProbe(out);
    expect(seen?.argv).toEqual(hostile);
    expect(seen?.pid).toBe(agent.pid);
    expect(seen?.cwd).toBe(dir);
    expect(seen?.env).toEqual({ FOO: 'bar', TMUX: null });
    await waitFor(() => processGone(agent.pid), { message: 'the agent to be reaped' });
    expect(existsSync(join(dir, 'canary'))).toBe(false);
    expect(existsSync(join(dir, 'canary2'))).toBe(false);
  });

  it("gives the agent exactly its launch environment, not the daemon's", async () => {
    const out = join(dir, 'env-report.json');
    const saved = { STALE: process.env.STALE, TERM: process.env.TERM };
    process.env.STALE = '1';
    process.env.TERM = 'the-daemons-terminal';
    const secret = `s3cret\n'"; $(touch ${dir}/canary-env) \`touch ${dir}/canary-tick\` ü;`;
    const env = {
      VAR: 'new',
      FOO: 'x',
      SECRET: secret,
      TERM: 'the-daemons-terminal',
      TMUX: '/tmp/tmux-1/default,1,0',
      'not-a-name': 'y',
      PROBE_OUT: out,
      PROBE_ENV: '*',
    };
    try {
      const agent = await runner.launch({
        name: 'env',
        argv: [process.execPath, probe],
        cwd: dir,
        env,
      });
      pids.add(agent.pid);
      await waitFor(async () => !(await runner.isTargetAlive(agent.target)), { message: 'exit' });
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
    // node-pty sets its terminal's TERM and the cwd's PWD; nothing else is added.
    expect(readProbe(out)?.env).toEqual({
      VAR: 'new',
      FOO: 'x',
      SECRET: secret,
      PROBE_OUT: out,
      PROBE_ENV: '*',
      TERM: 'xterm-256color',
      PWD: dir,
    });
    expect(existsSync(join(dir, 'canary-env'))).toBe(false);
    expect(existsSync(join(dir, 'canary-tick'))).toBe(false);
  });

  it('appends to an existing transcript', async () => {
    const log = join(dir, 'append.log');
    await writeFile(log, 'earlier attempt\n');
    const agent = await runner.launch({
      name: 'a',
      argv: [process.execPath, '-e', 'console.log("second attempt")'],
      cwd: dir,
      env: {},
      logFile: log,
    });
    pids.add(agent.pid);
    await waitFor(async () => !(await runner.isTargetAlive(agent.target)), { message: 'exit' });
    const text = await readFile(log, 'utf8');
    expect(text.startsWith('earlier attempt\n')).toBe(true);
    expect(text).toContain('second attempt');
  });

  it('stops a running agent (SIGHUP, then SIGKILL for one that ignores it)', async () => {
    const stubborn = await runner.launch({
      name: 'stubborn',
      argv: [
        process.execPath,
        '-e',
        'process.on("SIGHUP", () => {}); console.log("ready"); setInterval(() => {}, 1000)',
      ],
      cwd: dir,
      env: {},
      logFile: join(dir, 'stubborn.log'),
    });
    pids.add(stubborn.pid);
    await waitFor(
      async () => (await readFile(join(dir, 'stubborn.log'), 'utf8')).includes('ready'),
      {
        message: 'the agent to start',
      },
    );
    expect(await runner.isTargetAlive(stubborn.target)).toBe(true);
    await runner.stop(stubborn.target);
    expect(await runner.isTargetAlive(stubborn.target)).toBe(false);
    await waitFor(() => processGone(stubborn.pid), { message: 'the agent to be reaped' });
    await runner.stop(stubborn.target);
  });

  it('suffixes window names of running agents on collision', async () => {
    const spec = {
      name: 'same',
      argv: [process.execPath, '-e', 'setInterval(() => {}, 1000)'],
      cwd: dir,
      env: {},
    };
    const first = await runner.launch(spec);
    const second = await runner.launch(spec);
    pids.add(first.pid).add(second.pid);
    expect([first.windowName, second.windowName]).toEqual(['same', 'same-2']);
    await Promise.all([runner.stop(first.target), runner.stop(second.target)]);
  });

  it('knows nothing of targets it did not start, and rejects malformed ones', async () => {
    expect(await runner.isTargetAlive('pty:1')).toBe(false);
    await runner.stop('pty:1');
    await expect(runner.isTargetAlive('%1')).rejects.toThrow(/not a pty target/);
  });

  it('reports an unwritable transcript and a missing cwd before starting anything', async () => {
    const spec = { name: 'x', argv: [process.execPath, '-e', '0'], cwd: dir, env: {} };
    await expect(
      runner.launch({ ...spec, logFile: join(dir, 'no-such-dir', 'log') }),
    ).rejects.toThrow(/cannot open the transcript/);
    await expect(runner.launch({ ...spec, cwd: join(dir, 'missing') })).rejects.toThrow(/ENOENT/);
  });

  it('close() refuses new launches and kills nothing', async () => {
    const own = new PtyRunner();
    const agent = await own.launch({
      name: 'survivor',
      argv: [process.execPath, '-e', 'setInterval(() => {}, 1000)'],
      cwd: dir,
      env: {},
    });
    pids.add(agent.pid);
    await own.close();
    expect(await own.isTargetAlive(agent.target)).toBe(true);
    expect(processGone(agent.pid)).toBe(false);
    await expect(own.launch({ name: 'x', argv: ['true'], cwd: dir, env: {} })).rejects.toThrow(
      /closed/,
    );
    await own.stop(agent.target);
    expect(await own.isTargetAlive(agent.target)).toBe(false);
  });
});
