/**
 * The project root (docs/CLI.md, "The project root"): the commands that work on a project find
 * it as git finds its repository, from a subdirectory, from sessions/, from the request file given
 * by an absolute path; they refuse a --root that is not a project, and say so when there is none.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { craftedState } from '../helpers/crafted-state.js';
import { shellQuote, TEST_TAGS_MD } from '../helpers/daemon-harness.js';
import { engine, expectError, makeTempDir, type TempDir } from './fixtures.js';

let t: TempDir;
/** The project: `<tmp>/proj`, with directives/TAGS.md and sessions/. */
let proj: string;
/** A directory in no project. */
let elsewhere: string;

beforeEach(async () => {
  t = await makeTempDir('engine-root-');
  proj = t.path('proj');
  elsewhere = t.path('elsewhere');
  await mkdir(join(proj, 'directives'), { recursive: true });
  await mkdir(join(proj, 'sessions'));
  await mkdir(join(proj, 'docs', 'deep'), { recursive: true });
  await mkdir(elsewhere);
  await writeFile(join(proj, 'directives', 'TAGS.md'), TEST_TAGS_MD);
});
afterEach(() => t.cleanup());

const REF = 'sessions/2026_11_22_080000_FIX_r_0001';

/** `sessions/R.md` claimed (or `tags`) by REF, whose session exited and left an agent.log. */
async function finishedClaim(tags = '#claimed-fix'): Promise<string> {
  const file = join(proj, 'sessions', 'R.md');
  await writeFile(file, `# R\n**Tags**: ${tags}\n**Session**: ${REF}\n`);
  const dir = join(proj, REF);
  await mkdir(dir);
  const state = craftedState(proj, file, REF, { status: 'exited', exitCode: 0 });
  await writeFile(join(dir, '.state.json'), JSON.stringify(state));
  await writeFile(join(dir, 'agent.log'), 'the agent said this\n');
  return file;
}

interface StatusJson {
  root: string;
  waiting: Array<{ file: string }>;
}

describe('the project root is found above the current directory', () => {
  it('engine status from sessions/ and from a subdirectory reads the project above', async () => {
    await writeFile(join(proj, 'sessions', 'W.md'), '# W\n**Tags**: #delegated-fix\n');
    for (const cwd of [join(proj, 'sessions'), join(proj, 'docs', 'deep')]) {
      const result = await engine(cwd, ['status', '--json']);
      expect(result.code, result.stderr).toBe(0);
      const report = JSON.parse(result.stdout) as StatusJson;
      expect(report.root).toBe(proj);
      expect(report.waiting.map((w) => w.file)).toEqual([join(proj, 'sessions', 'W.md')]);
    }
    const text = await engine(join(proj, 'sessions'), ['status']);
    expect(text.stdout.split('\n').slice(0, 2)).toEqual([
      `Project ${proj}`,
      '§TAG_DISPATCH from directives/TAGS.md',
    ]);
  });

  it('engine logs and attach from sessions/ resolve the Session line against the project', async () => {
    await finishedClaim('#done-fix');
    const logs = await engine(join(proj, 'sessions'), ['logs', 'R.md']);
    expect({ code: logs.code, stdout: logs.stdout }).toEqual({
      code: 0,
      stdout: 'the agent said this\n',
    });
    const attach = await engine(join(proj, 'sessions'), ['attach', 'R.md']);
    expectError(attach, 'R.md is done (#done-fix); its agent has exited; see engine logs R.md');
  });

  it('engine logs of a session directory finds the project above it', async () => {
    await finishedClaim();
    const logs = await engine(elsewhere, ['logs', join(proj, REF)]);
    expect({ code: logs.code, stdout: logs.stdout }).toEqual({
      code: 0,
      stdout: 'the agent said this\n',
    });
  });

  it('engine run --dry-run in sessions/ plans the items of the project above', async () => {
    await writeFile(join(proj, 'sessions', 'W.md'), '# W\n**Tags**: #delegated-fix\n');
    const agentCmd = `${shellQuote(process.execPath)} agent.mjs {file}`;
    const result = await engine(join(proj, 'sessions'), [
      'run',
      '--monitor-tags',
      '--dry-run',
      // A file is planned once quiet this long; just written, it is not yet.
      '--debounce-ms',
      '0',
      '--agent-cmd',
      agentCmd,
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      `1. ${join(proj, 'sessions', 'W.md')}  #delegated-fix → /fix  (weight P2, priority 3)\n`,
    );
    expect(existsSync(join(proj, 'sessions', 'sessions'))).toBe(false);
  });
});

describe('a request file given by path belongs to the project above it', () => {
  it('engine logs and attach from a directory in no project, with an absolute path', async () => {
    const file = await finishedClaim();
    const logs = await engine(elsewhere, ['logs', file]);
    expect({ code: logs.code, stdout: logs.stdout }).toEqual({
      code: 0,
      stdout: 'the agent said this\n',
    });
    const attach = await engine(elsewhere, ['attach', file]);
    expectError(
      attach,
      `Session ${REF} has no live agent: agent exited with code 0 without marking #done-fix`,
    );
  });

  it('a Session line naming a directory that does not exist is reported as exactly that', async () => {
    const file = join(proj, 'sessions', 'R.md');
    await writeFile(file, `# R\n**Tags**: #claimed-fix\n**Session**: ${REF}\n`);
    const missing = `${file}: its Session line names ${join(proj, REF)}, which does not exist (project root ${proj})`;
    expectError(await engine(elsewhere, ['logs', file]), missing);
    expectError(await engine(elsewhere, ['attach', file]), missing);
  });
});

describe('no project, or a --root that is not one', () => {
  const COMMANDS = [
    ['status'],
    ['resume'],
    ['worktree', 'prune'],
    ['run', '--monitor-tags', '--dry-run'],
  ];

  it('each command says there is no project and exits 1', async () => {
    const none = `Not in an engine project: no directives/TAGS.md or directives/engine.json in ${elsewhere} or any directory above; run engine init to make one, or give --root`;
    for (const args of COMMANDS) expectError(await engine(elsewhere, args), none);
    await writeFile(join(elsewhere, 'R.md'), `# R\n**Tags**: #claimed-fix\n**Session**: ${REF}\n`);
    for (const command of ['logs', 'attach']) {
      expectError(
        await engine(elsewhere, [command, 'R.md']),
        `Not in an engine project: no directives/TAGS.md or directives/engine.json in ${elsewhere} or any directory above; run engine init to make one, or give --root`,
      );
    }
  });

  it('a --root that is missing, a file, or not a project is an error, and nothing is made', async () => {
    await writeFile(join(elsewhere, 'README.md'), '# readme\n');
    const file = await finishedClaim();
    const bad: Array<[string, string]> = [
      [t.path('no', 'such'), `--root ${t.path('no', 'such')}: no such directory`],
      [join(elsewhere, 'README.md'), `--root ${join(elsewhere, 'README.md')} is not a directory`],
      [
        join(elsewhere, 'README.md', 'x'),
        `--root ${join(elsewhere, 'README.md', 'x')} is not a directory`,
      ],
      [
        elsewhere,
        `--root ${elsewhere} is not an engine project: it has no directives/TAGS.md or directives/engine.json (engine init makes one)`,
      ],
      // The root itself, not a project above it: sessions/ is inside one.
      [
        join(proj, 'sessions'),
        `--root ${join(proj, 'sessions')} is not an engine project: it has no directives/TAGS.md or directives/engine.json (engine init makes one)`,
      ],
    ];
    for (const [root, message] of bad) {
      const commands = [...COMMANDS, ['logs', file], ['attach', file]];
      const results = await Promise.all(commands.map((c) => engine(proj, [...c, '--root', root])));
      for (const result of results) expectError(result, message);
    }
    expect(existsSync(t.path('no'))).toBe(false);
    expect(existsSync(join(elsewhere, 'sessions'))).toBe(false);
    expect(existsSync(join(proj, 'sessions', 'sessions'))).toBe(false);
  });

  it('engine init needs no project: it makes one in the current directory', async () => {
    const result = await engine(elsewhere, ['init']);
    expect(result.code, result.stderr).toBe(0);
    expect((await engine(elsewhere, ['status'])).code).toBe(0);
  });
});
