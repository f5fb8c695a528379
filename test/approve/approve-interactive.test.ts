/**
 * `engine tag approve` in a real pseudo-terminal (node-pty): keys are typed one at a time, each
 * after its prompt has appeared, and the files are checked afterwards.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IPty } from 'node-pty';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { shellQuote } from '../helpers/daemon-harness.js';
import { CLI } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

type PtyModule = typeof import('node-pty');
/** node-pty is an optional dependency; without it these tests are skipped, not failed. */
const pty: PtyModule | null = await import('node-pty')
  .then((m) => ((m as { default?: PtyModule }).default ?? m) as PtyModule)
  .catch(() => null);

const PROMPT = 'q quit > ';

interface Session {
  term: IPty;
  output(): string;
  exited: Promise<number>;
  /** Waits for the n-th prompt (1-based) to appear. */
  prompt(n: number): Promise<void>;
}

let dir: string;
const sessions: IPty[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-approve-pty-'));
});

afterEach(async () => {
  for (const term of sessions.splice(0)) {
    try {
      process.kill(term.pid, 'SIGKILL');
    } catch {
      // already exited
    }
  }
  await rm(dir, { recursive: true, force: true });
});

function start(file: string, args: string[]): Session {
  const term = (pty as PtyModule).spawn(file, args, {
    name: 'xterm',
    cols: 160,
    rows: 50,
    cwd: dir,
    env: process.env as Record<string, string>,
  });
  sessions.push(term);
  let output = '';
  term.onData((data) => (output += data));
  const exited = new Promise<number>((resolve) => term.onExit(({ exitCode }) => resolve(exitCode)));
  const count = () => output.split(PROMPT).length - 1;
  return {
    term,
    output: () => output,
    exited,
    prompt: (n) =>
      waitFor(() => count() >= n, { message: `prompt ${n}; output so far:\n${output}` }).then(
        () => undefined,
      ),
  };
}

function approve(...paths: string[]): Session {
  return start(process.execPath, [CLI, 'tag', 'approve', ...paths]);
}

async function exitCode(session: Session): Promise<number> {
  let code: number | undefined;
  void session.exited.then((c) => (code = c));
  await waitFor(() => code !== undefined, {
    message: `exit; output so far:\n${session.output()}`,
  });
  return code as number;
}

const read = (name: string) => readFile(join(dir, name), 'utf8');

describe.skipIf(pty === null)('engine tag approve (interactive, in a pseudo-terminal)', () => {
  it('approves one, picks one for the next skill, skips one, drops one, views a file, and quits', async () => {
    await writeFile(join(dir, 'a.md'), '# Alpha request\n**Tags**: #needs-fix #P1\n\nBody.\n');
    await writeFile(join(dir, 'b.md'), '---\ntags: [needs-review]\n---\n# Beta\n\nSecret line 6\n');
    await writeFile(
      join(dir, 'c.md'),
      '# Gamma\n\n1. First step #needs-chores\n2. Second step #needs-docs\n',
    );
    await writeFile(join(dir, 'd.md'), '# Delta\n**Tags**: #needs-implementation\n');

    const s = approve(dir);
    await s.prompt(1);
    expect(s.output()).toContain(`[1/5] ${join(dir, 'a.md')}`);
    expect(s.output()).toContain('Alpha request');
    expect(s.output()).toContain('#needs-fix on the Tags line');
    expect(s.output()).toMatch(/> 2 \| \*\*Tags\*\*: #needs-fix #P1/);
    s.term.write('a');

    await s.prompt(2);
    expect(s.output()).toContain('approved: #needs-fix -> #delegated-fix');
    expect(s.output()).toContain('#needs-review in front matter');
    expect(s.output()).not.toContain('Secret line 6');
    s.term.write('v');
    await s.prompt(3);
    expect(s.output()).toContain('Secret line 6');
    s.term.write('x');

    await s.prompt(4);
    expect(s.output()).toContain('picked for the next skill: #needs-review -> #next-review');
    expect(s.output()).toContain('#needs-chores at line 3');
    s.term.write('n'); // read as "no" by users once: not a key, and the hint says which is
    await s.prompt(5);
    expect(s.output()).toContain('n is not a key here: s or Enter skips (file untouched)');
    s.term.write('\r'); // Enter skips

    await s.prompt(6);
    expect(s.output()).toContain('#needs-docs at line 4');
    s.term.write('d');

    await s.prompt(7);
    expect(s.output()).toContain('[5/5]');
    s.term.write('q');

    expect(await exitCode(s)).toBe(0);
    const out = s.output().replace(/\r/g, '');
    expect(out).toContain('skipped: #needs-chores left at line 3, file untouched');
    expect(out).toContain(
      'approved 1, next skill 1, skipped 1, dropped 1, not reviewed 1\n' +
        `Changed:\n  ${join(dir, 'a.md')}: #needs-fix -> #delegated-fix\n` +
        `  ${join(dir, 'b.md')}: #needs-review -> #next-review\n` +
        `  ${join(dir, 'c.md')}: #needs-docs -> (removed)\n`,
    );
    expect(await read('a.md')).toBe('# Alpha request\n**Tags**: #delegated-fix #P1\n\nBody.\n');
    expect(await read('b.md')).toBe('---\ntags: [next-review]\n---\n# Beta\n\nSecret line 6\n');
    expect(await read('c.md')).toBe('# Gamma\n\n1. First step #needs-chores\n2. Second step\n');
    expect(await read('d.md')).toBe('# Delta\n**Tags**: #needs-implementation\n');
  });

  it('notes a swap refused because the tag changed meanwhile, and goes on', async () => {
    await writeFile(join(dir, 'a.md'), '# A\n**Tags**: #needs-fix\n');
    await writeFile(join(dir, 'b.md'), '# B\n**Tags**: #needs-fix\n');
    const s = approve(dir);
    await s.prompt(1);
    // Someone claims a.md while the human is looking at it.
    await writeFile(join(dir, 'a.md'), '# A\n**Tags**: #delegated-fix\n');
    s.term.write('a');
    await s.prompt(2);
    expect(s.output()).toMatch(/not changed: None of '#needs-fix' found on Tags line of .*a\.md/);
    s.term.write('a');
    expect(await exitCode(s)).toBe(0);
    expect(s.output()).toContain('approved 1, next skill 0, skipped 0, dropped 0, not changed 1');
    expect(await read('a.md')).toBe('# A\n**Tags**: #delegated-fix\n');
    expect(await read('b.md')).toBe('# B\n**Tags**: #delegated-fix\n');
  });

  it('Ctrl-C quits, changes nothing, and gives the terminal back as it found it', async () => {
    await writeFile(join(dir, 'a.md'), '# A\n**Tags**: #needs-fix\n');
    const command = `${shellQuote(process.execPath)} ${shellQuote(CLI)} tag approve .`;
    const s = start('/bin/sh', [
      '-c',
      `stty -a; echo BEFORE-END; ${command}; echo "rc=$?"; echo AFTER-START; stty -a; echo AFTER-END`,
    ]);
    await s.prompt(1);
    s.term.write('\x03');
    expect(await exitCode(s)).toBe(0);
    const out = s.output().replace(/\r/g, '');
    expect(out).toContain('rc=0');
    expect(out).toContain('approved 0, next skill 0, skipped 0, dropped 0, not reviewed 1');
    expect(out).toContain('No file changed.');
    const before = out.slice(0, out.indexOf('BEFORE-END'));
    const after = out.slice(
      out.indexOf('AFTER-START') + 'AFTER-START'.length,
      out.indexOf('AFTER-END'),
    );
    expect(after.trim()).toBe(before.trim());
    expect(after).toMatch(/(^|\s)icanon(\s|$)/);
    expect(after).toMatch(/(^|\s)echo(\s|$)/);
    expect(await read('a.md')).toBe('# A\n**Tags**: #needs-fix\n');
  });

  it('SIGTERM ends the walk like q, with a summary, and exits 1', async () => {
    await writeFile(join(dir, 'a.md'), '# A\n**Tags**: #needs-fix\n');
    const s = approve('.');
    await s.prompt(1);
    process.kill(s.term.pid, 'SIGTERM');
    expect(await exitCode(s)).toBe(1);
    expect(s.output()).toContain('approved 0, next skill 0, skipped 0, dropped 0, not reviewed 1');
    expect(s.output()).toContain('ERROR: Interrupted by SIGTERM');
    expect(await read('a.md')).toBe('# A\n**Tags**: #needs-fix\n');
  });

  it('says so when there is nothing to approve', async () => {
    await writeFile(join(dir, 'a.md'), '# A\n**Tags**: #delegated-fix\n');
    const s = approve('.');
    expect(await exitCode(s)).toBe(0);
    expect(s.output()).toContain('No #needs- items in .');
  });

  // A title is the file's text: on a terminal its control characters show in caret notation and
  // never act (a colour, a window title; found by a walk).
  it("shows a title's control characters as text, not as the terminal's commands", async () => {
    await writeFile(
      join(dir, 'a.md'),
      '# T \u001b[31mRED\u001b]0;pwn\u0007\n**Tags**: #needs-fix\n',
    );
    const s = approve('.');
    await s.prompt(1);
    s.term.write('q');
    expect(await exitCode(s)).toBe(0);
    expect(s.output()).toContain('T ^[[31mRED^[]0;pwn^G');
    expect(s.output()).not.toContain('\u001b[31mRED');
    expect(s.output()).not.toContain('\u001b]0;pwn');
  });

  // "Nothing to approve" over a misspelled path, or with a request that could not be read, was
  // a wrong answer with exit 0 (found by a walk).
  it('fails on a path that is not there, and exits 2 when a file was skipped', async () => {
    const missing = approve('nope');
    expect(await exitCode(missing)).toBe(1);
    expect(missing.output()).toContain('ERROR: nope: no such file or directory: nothing searched');
    await writeFile(join(dir, 'big.md'), `# Big\n**Tags**: #needs-fix\n${'x'.repeat(1 << 20)}\n`);
    const skipped = approve('.');
    expect(await exitCode(skipped)).toBe(2);
    expect(skipped.output()).toContain('No #needs- items in .');
    expect(skipped.output()).toContain('ERROR: incomplete answer: 1 skipped (named above)');
  });
});
