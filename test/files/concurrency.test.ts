/**
 * Atomicity of the one writer, through real processes: concurrent claims, and edits while
 * another process keeps writing the same file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fd3Lines, RACER, warmRacer } from '../helpers/racer.js';
import { CLI, type CliResult } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';
import { engine, leftovers, makeTempDir, type TempDir } from '../cli/fixtures.js';

const RACERS = 20;
/** Rounds with a fresh `engine` process per racer: each costs 20 process start-ups. */
const FRESH_ROUNDS = 1;
/** Rounds with 20 warm racer processes that run the built CLI's main module once per round. */
const WARM_ROUNDS = 10;

let t: TempDir;
const children: ChildProcess[] = [];

beforeEach(async () => {
  t = await makeTempDir('engine-race-');
});

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  await t.cleanup();
});

function track(child: ChildProcess): ChildProcess {
  children.push(child);
  return child;
}

/** A fresh `engine <args>` process, modules loaded, held at a barrier until `go()`. */
function freshRacer(args: string[]): {
  ready: Promise<string>;
  go(): void;
  done: Promise<CliResult>;
} {
  const child = track(
    spawn(process.execPath, ['--import', pathToFileURL(RACER).href, CLI, ...args], {
      cwd: t.dir,
      env: { ...process.env, RACER_MODE: 'barrier' },
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    }),
  );
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  const ready = Promise.race([
    fd3Lines(child)(),
    done.then((r) => Promise.reject(new Error(`racer exited early: ${r.stderr}`))),
  ]);
  return { ready, go: () => child.stdin?.end('g'), done };
}

const ITEM = 'item.md';
const INITIAL = '# Item\n**Tags**: #P1 #delegated-x\n\nThe body mentions #delegated-x.\n';
const CLAIMED = '# Item\n**Tags**: #P1 #claimed-x\n\nThe body mentions #delegated-x.\n';
const REFUSAL = `ERROR: None of '#delegated-x' found on Tags line of ${ITEM} (already claimed?)\n`;
const SWAP = ['tag', 'swap', ITEM, '#delegated-x', '#claimed-x'];

async function expectOneWinner(results: CliResult[], round: number): Promise<void> {
  const summary = results.map((r) => [r.code, r.stdout, r.stderr]);
  expect(
    summary.filter(([code]) => code === 0),
    `round ${round}`,
  ).toEqual([[0, '', '']]);
  expect(
    summary.filter(([code]) => code !== 0),
    `round ${round}`,
  ).toEqual(Array.from({ length: RACERS - 1 }, () => [1, '', REFUSAL]));
  expect(await readFile(t.path(ITEM), 'utf8')).toBe(CLAIMED);
  expect(await leftovers(t.dir)).toEqual([]);
}

describe('concurrent claims: of 20 simultaneous swaps exactly one wins', () => {
  it(`with a fresh engine process per racer (rounds: ${FRESH_ROUNDS})`, async () => {
    for (let round = 0; round < FRESH_ROUNDS; round++) {
      await writeFile(t.path(ITEM), INITIAL);
      const racers = Array.from({ length: RACERS }, () => freshRacer(SWAP));
      await Promise.all(racers.map((r) => r.ready));
      for (const racer of racers) racer.go();
      await expectOneWinner(await Promise.all(racers.map((r) => r.done)), round);
    }
  });

  it(`with ${RACERS} warm racer processes (rounds: ${WARM_ROUNDS})`, async () => {
    const racers = Array.from({ length: RACERS }, () => warmRacer(t.dir, track));
    await Promise.all(racers.map((r) => r.ready));
    for (let round = 0; round < WARM_ROUNDS; round++) {
      await writeFile(t.path(ITEM), INITIAL);
      const reports = await Promise.all(racers.map((r) => r.run(round, SWAP)));
      expect(reports.map((r) => r.round)).toEqual(reports.map(() => round));
      await expectOneWinner(reports, round);
    }
  });
});

/**
 * Another process writing the file without our lock: `append` appends numbered lines in place
 * (O_APPEND, like a log); `editor` reads the whole file, adds a line and saves it by temp file
 * and rename, like an editor. Ending its stdin stops it; it prints how many lines it wrote.
 */
const WRITER = `
const fs = require('node:fs');
const path = require('node:path');
const { WRITER_FILE: file, WRITER_MODE: mode, WRITER_PAUSE_MS: pause, WRITER_MAX: max } = process.env;
const temp = path.join(path.dirname(file), '.editor-' + process.pid + '.swp');
let n = 0;
let stop = false;
process.stdin.on('data', () => {}).on('end', () => (stop = true));
const tick = () => {
  if (stop) return process.stdout.write(n + '\\n');
  if (n >= Number(max)) return setTimeout(tick, 20);
  const line = mode + ' line ' + n + '\\n';
  if (mode === 'append') fs.appendFileSync(file, line);
  else {
    fs.writeFileSync(temp, Buffer.concat([fs.readFileSync(file), Buffer.from(line)]));
    fs.renameSync(temp, file);
  }
  n++;
  setTimeout(tick, Number(pause));
};
tick();
`;

interface Writer {
  /** Stops the writer and resolves to the number of lines it wrote. */
  stop(): Promise<number>;
}

/** Writes a line every `pauseMs`, at most `max` lines (so parsing the file stays cheap). */
function startWriter(
  file: string,
  mode: 'append' | 'editor',
  pauseMs: number,
  max: number,
): Writer {
  const env = {
    WRITER_FILE: file,
    WRITER_MODE: mode,
    WRITER_PAUSE_MS: `${pauseMs}`,
    WRITER_MAX: `${max}`,
  };
  const child = spawn(process.execPath, ['-e', WRITER], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    stop: async () => {
      child.stdin?.end();
      const code = await exited;
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      return Number(stdout.trim());
    },
  };
}

const HEADER = '# Item\n**Tags**: #P1 #s-a\n\nBody with #s-a in prose.\n';

/** Two chains of edits that always succeed, run at once so they also contend for the lock. */
async function editRepeatedly(file: string, cycles: number): Promise<CliResult[]> {
  const chain = async (steps: string[][]): Promise<CliResult[]> => {
    const results: CliResult[] = [];
    for (let i = 0; i < cycles; i++) {
      for (const step of steps) results.push(await engine(t.dir, ['tag', ...step]));
    }
    return results;
  };
  const results = await Promise.all([
    chain([
      ['swap', file, '#s-a', '#s-b'],
      ['swap', file, '#s-b', '#s-a'],
    ]),
    chain([
      ['add', file, '#extra'],
      ['remove', file, '#extra'],
    ]),
  ]);
  return results.flat();
}

function countLines(text: string, prefix: string): Map<number, number> {
  const counts = new Map<number, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(prefix)) continue;
    const n = Number(line.slice(prefix.length));
    counts.set(n, (counts.get(n) ?? 0) + 1);
  }
  return counts;
}

/**
 * Starts the writer on a fresh file `name`, edits the file repeatedly once the writer has written
 * a few lines, then stops the writer. Every edit must succeed; resolves to how many lines the
 * writer wrote and the text left.
 */
async function editWhileWriting(
  name: string,
  mode: 'append' | 'editor',
  pauseMs: number,
  max: number,
): Promise<{ written: number; text: string }> {
  const file = t.path(name);
  await writeFile(file, HEADER);
  const writer = startWriter(file, mode, pauseMs, max);
  await waitFor(async () => (await readFile(file, 'utf8')).includes(`${mode} line 5`), {
    message: `the ${mode} writer to start`,
  });
  const results = await editRepeatedly(name, 2);
  const written = await writer.stop();
  // An editor saves what it read, so it can undo an edit that landed after its read; the swap
  // that follows an undone swap then finds its tag gone and is refused, as a compare-and-swap
  // must. Every other edit succeeds.
  for (const result of results) {
    if (result.code === 0 || mode === 'append') {
      expect(result).toEqual({ code: 0, stdout: '', stderr: '' });
    } else expect(result.stderr).toMatch(/^ERROR: None of '#s-[ab]' found on Tags line/);
  }
  expect(results.filter((r) => r.code === 0).length).toBeGreaterThan(results.length / 2);
  return { written, text: await readFile(file, 'utf8') };
}

describe('edits while another process writes the file', () => {
  it('never loses an in-place append (O_APPEND)', async () => {
    const { written, text } = await editWhileWriting('log.md', 'append', 2, 3000);
    expect(text.startsWith(HEADER)).toBe(true);
    const counts = countLines(text, 'append line ');
    const lost = Array.from({ length: written }, (_, n) => n).filter((n) => !counts.has(n));
    expect(lost, `lost appends of ${written}`).toEqual([]);
    expect([...counts.values()].every((c) => c === 1)).toBe(true);
    // Nothing but the header and whole appended lines: no torn or merged lines.
    const body = text.slice(HEADER.length).split('\n');
    expect(body.pop()).toBe('');
    expect(body.filter((line) => !/^append line \d+$/.test(line))).toEqual([]);
    expect(body).toHaveLength(written);
    expect(await leftovers(t.dir)).toEqual([]);
  });

  it('re-applies edits over an editor that saves by rename, and never starves', async () => {
    // No edit starves: a save between read and rename makes it re-read and re-apply.
    const { written, text } = await editWhileWriting('edited.md', 'editor', 40, 200);
    const lines = text.split('\n');
    expect(lines.slice(0, 1)).toEqual(['# Item']);
    // The editor saves what it read, so it may undo one of our edits; but no writer ever leaves
    // a duplicate tag or a torn line.
    const tags = (lines[1] ?? '').split(' ').slice(1);
    expect(lines[1]).toMatch(/^\*\*Tags\*\*: /);
    expect(new Set(tags).size).toBe(tags.length);
    expect(tags.filter((tag) => tag === '#s-a' || tag === '#s-b')).toHaveLength(1);
    expect(lines.slice(2, 4)).toEqual(['', 'Body with #s-a in prose.']);
    expect(lines.slice(4, -1).filter((line) => !/^editor line \d+$/.test(line))).toEqual([]);
    const counts = countLines(text, 'editor line ');
    expect([...counts.values()].every((c) => c === 1)).toBe(true);
    // An editor's save that lands between our final check and our rename is replaced by our
    // rename: that window is a few system calls wide, so losses must stay rare.
    const lost = Array.from({ length: written }, (_, n) => n).filter((n) => !counts.has(n));
    expect(lost.length, `lost ${lost.length} of ${written} saves: ${lost}`).toBeLessThanOrEqual(2);
    expect((await leftovers(t.dir)).filter((n) => !n.startsWith('.editor-'))).toEqual([]);
  });
});
