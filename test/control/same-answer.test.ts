/**
 * `engine tag find` and `engine status` print the same bytes on stdout and stderr, with the same
 * exit code, whether the running daemon answers (ENGINE_ASK_DAEMON=only: it must) or the files
 * are read (ENGINE_ASK_DAEMON=0), on a tree with decoys and files find warns about, and right
 * after a write (the sync).
 */
import { link, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonHarness, type DaemonProcess } from '../helpers/daemon-harness.js';
import { runCli, type CliResult } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

let h: DaemonHarness;
let daemon: DaemonProcess;

const TREE: Record<string, string | Buffer> = {
  'plain.md': '# Plain\n\n**Tags**: #needs-a #P1\n\nProse #needs-a here, and #next-c.\n',
  'decoys.md': [
    '# Decoys',
    '',
    '**Tags**: #needs-b',
    '',
    'A code span `#needs-a`, a [link #needs-a](#needs-a), [x](http://e.example/#needs-a).',
    '',
    '```',
    '#needs-a in a fence',
    '```',
    '',
    '<!-- #needs-a in a comment -->',
    '',
  ].join('\n'),
  'front.md': '---\ntitle: F\ntags: [needs-a, next-b]\n---\n# Front\n',
  'broken.md': '---\ntags: [needs-a\n---\n# Broken\n\n#needs-a\n',
  'binary.md': Buffer.concat([Buffer.from('# Bin\n#needs-a\n'), Buffer.from([0, 1, 2])]),
  'big.md': `# Big\n\n#needs-a\n${'x'.repeat(1024 * 1024)}\n`,
  'sub.md': '# Sub\n\n**Tags**: #needs-a\n',
  'sub/deeper/x.md': '# X\n\n**Tags**: #needs-a #needs-d\n',
  'sub/y.md': '# Y\n\nnothing here\n',
  'node_modules/n.md': '# N\n\n**Tags**: #needs-a\n',
  'notags.md': '# None\n',
};

async function writeTree(sessions: string): Promise<void> {
  for (const [name, content] of Object.entries(TREE)) {
    await mkdir(join(sessions, name, '..'), { recursive: true });
    await writeFile(join(sessions, name), content);
  }
  await writeFile(join(sessions, '..', 'outside.md'), '# Out\n\n**Tags**: #needs-a\n');
  await symlink(join(sessions, '..', 'outside.md'), join(sessions, 'link.md'));
}

beforeAll(async () => {
  h = await DaemonHarness.open();
  await writeTree(h.sessions);
  daemon = h.start();
  await waitFor(() => daemon.output().includes('tag index ready'), {
    message: () => `the tag index; output:\n${daemon.output()}`,
  });
}, 60_000);

afterAll(async () => {
  await h.close();
});

function engine(args: string[], ask: '0' | '1' | 'only'): Promise<CliResult> {
  return runCli(args, { cwd: h.root, env: { ...process.env, ENGINE_ASK_DAEMON: ask } });
}

/** Asks the daemon (it must answer), then reads the files; both results. */
async function both(args: string[]): Promise<{ daemon: CliResult; files: CliResult }> {
  const daemonAnswer = await engine(args, 'only');
  expect(daemonAnswer.stderr).not.toContain('ENGINE_ASK_DAEMON=only');
  return { daemon: daemonAnswer, files: await engine(args, '0') };
}

describe('the same answer with and without the daemon', () => {
  const finds = [
    ['#needs-a'],
    ['#needs-a', '--context'],
    ['#needs-a', '--tags-only'],
    ['#needs-a', '--json'],
    ['#needs-a', '--verbose'],
    ['#needs-*', 'sessions/', '--json', '--tags-only'],
    ['#needs-a', './sessions/sub'],
    ['#needs-a', 'sessions/plain.md', 'sessions/sub', 'sessions'],
    ['#nothing-here'],
  ];
  for (const args of finds) {
    it(`engine tag find ${args.join(' ')}`, async () => {
      const { daemon: fromDaemon, files } = await both(['tag', 'find', ...args]);
      expect(fromDaemon).toEqual(files);
    });
  }

  it('an answer missing a file it could not search exits 2, from the daemon too', async () => {
    // big.md (over 1 MiB) and binary.md hold #needs-a: named, not searched.
    const { daemon: fromDaemon, files } = await both(['tag', 'find', '#needs-a']);
    expect(fromDaemon).toEqual(files);
    expect(fromDaemon.code).toBe(2);
    expect(fromDaemon.stdout).toContain('sessions/plain.md');
    expect(fromDaemon.stderr).toBe(
      'WARN: skipped sessions/big.md: larger than 1048576 bytes, not parsed\n' +
        'WARN: skipped sessions/binary.md: not UTF-8 text\n' +
        'ERROR: incomplete answer: 2 skipped (named above)\n',
    );
  });

  it('engine tag find with an absolute path', async () => {
    const { daemon: fromDaemon, files } = await both(['tag', 'find', '#needs-a', h.sessions]);
    expect(fromDaemon).toEqual(files);
    expect(files.stdout).toContain(join(h.sessions, 'plain.md'));
  });

  it('a path the kernel reads otherwise than its text: the files are read', async () => {
    // `plain.md/` and `plain.md/..` are ENOTDIR to the kernel; `ln/..` is the symlink target's
    // parent. Resolved as text, each would name a file or directory the daemon answers for.
    await mkdir(join(h.root, 'elsewhere'), { recursive: true });
    await writeFile(join(h.root, 'elsewhere', 'e.md'), '# E\n\n**Tags**: #needs-a\n');
    await symlink(join(h.root, 'elsewhere'), join(h.sessions, 'ln'));
    try {
      for (const path of [
        'sessions/plain.md/',
        'sessions/plain.md/.',
        'sessions/plain.md/../plain.md',
        'sessions/ln/..',
        'sessions/ln/../sessions',
      ]) {
        const args = ['tag', 'find', '#needs-a', path];
        const files = await engine(args, '0');
        expect({ path, ...(await engine(args, '1')) }).toEqual({ path, ...files });
      }
    } finally {
      await rm(join(h.sessions, 'ln'));
    }
  });

  it('status after a hard link outside the tree is added or removed (no event)', async () => {
    const file = join(h.sessions, 'linked.md');
    const other = join(h.root, 'other-name.md');
    // Held by a dependency, so the daemon never dispatches it: a file with one name is waiting,
    // with two it needs you.
    await writeFile(file, '# L\n\n**Tags**: #delegated-fix\n**Depends On**: sessions/plain.md\n');
    try {
      for (const change of [() => link(file, other), () => rm(other)]) {
        await change();
        const status = await both(['status', '--json']);
        expect(status.daemon).toEqual(status.files);
      }
    } finally {
      await rm(file);
      await rm(other, { force: true });
    }
  });

  it('engine status --json', async () => {
    const { daemon: fromDaemon, files } = await both(['status', '--json']);
    expect(fromDaemon.code).toBe(0);
    expect(fromDaemon).toEqual(files);
  });

  it('engine status', async () => {
    // Ages are printed to the second: a pair of runs may straddle one.
    let pair = await both(['status']);
    for (let i = 0; i < 2 && pair.daemon.stdout !== pair.files.stdout; i++)
      pair = await both(['status']);
    expect(pair.daemon.code).toBe(0);
    expect(pair.daemon).toEqual(pair.files);
  });

  it('right after each write', async () => {
    const file = (name: string): string => join(h.sessions, name);
    const writes: Array<() => Promise<void>> = [
      () => writeFile(file('plain.md'), '# Plain\n\nno tag now\n'),
      () => writeFile(file('new.md'), '# New\n\n**Tags**: #needs-a\n'),
      () => rm(file('front.md')),
      async () => {
        await mkdir(file('fresh/inner'), { recursive: true });
        await writeFile(file('fresh/inner/z.md'), '# Z\n\n**Tags**: #needs-a\n');
      },
      () => rename(file('sub'), file('moved')),
      () => rm(file('moved'), { recursive: true }),
      () => writeFile(file('decoys.md'), '# D\n\n`#needs-a` #needs-a\n'),
    ];
    // Status first: the daemon keeps each unchanged file's findings, and must forget a changed one.
    await both(['status', '--json']);
    for (const write of writes) {
      await write();
      const { daemon: fromDaemon, files } = await both(['tag', 'find', '#needs-a', '--json']);
      expect(fromDaemon).toEqual(files);
      const status = await both(['status', '--json']);
      expect(status.daemon).toEqual(status.files);
    }
  });
});
