/**
 * Injection: request files named with shell metacharacters, quotes, newlines, leading dashes and
 * tmux syntax; tag nouns that try to break out; a skill in §TAG_DISPATCH that carries shell
 * syntax; every placeholder of the agent template fed those values. Canary files prove that no
 * command ran that should not, and the agent must receive each value as exactly one argument.
 * Figure: injections (must be 0) out of N hostile names.
 */
import { existsSync, readdirSync } from 'node:fs';
import { realpath, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  read,
  shellQuote,
  tagsOf,
  TEST_AGENT,
  TEST_TAGS_MD,
  useDaemonHarness,
  waitForTag,
} from '../helpers/daemon-harness.js';
import { waitFor } from '../helpers/wait-for.js';
import { FAST, recordFigure, TORTURE } from './support.js';

const s = useDaemonHarness(FAST);

/** Each name, if ever run by a shell or tmux, would create a file starting with PWNED. */
const HOSTILE_NAMES = [
  '$(touch PWNED-1).md',
  '`touch PWNED-2`.md',
  'a; touch PWNED-3.md',
  'b && touch PWNED-4 && c.md',
  'c | touch PWNED-5.md',
  'it\'s "quoted" $(touch PWNED-6).md',
  'new\nline; touch PWNED-7.md',
  '-rf.md',
  '--help.md',
  '--agent-cmd=touch PWNED-8.md',
  ' spaced  name .md',
  'x \\; run-shell "touch PWNED-9" \\;.md',
  '#{pane_id} #(touch PWNED-10).md',
  '%1 $HOME ~ * ?.md',
  '{file} {session} {skill}.md',
  '>PWNED-11 <x.md',
  'tab\there\rcr.md',
];

const HOSTILE_TAGS_LINES = [
  '#delegated-fix$(touch PWNED-20)',
  '#delegated-fix;touch PWNED-21',
  '#delegated-fix`touch PWNED-22`',
  '#delegated-fix"; touch PWNED-23; "',
];

/** Canary files anywhere a stray command could have run. */
function canaries(dirs: string[]): string[] {
  const found: string[] = [];
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) if (name.startsWith('PWNED')) found.push(join(dir, name));
  }
  return found;
}

describe('hostile names and values never run as commands', () => {
  it(`${HOSTILE_NAMES.length} hostile file names and ${HOSTILE_TAGS_LINES.length} hostile Tags lines, every placeholder filled`, async () => {
    const template = [
      process.execPath,
      TEST_AGENT,
      '{file}',
      '{skill}',
      '{noun}',
      '{tag}',
      '{session}',
    ]
      .map(shellQuote)
      .join(' ');
    const files: string[] = [];
    for (const name of HOSTILE_NAMES) {
      const file = s.file(name);
      await writeFile(file, '# R\n**Tags**: #delegated-fix\n');
      files.push(file);
    }
    for (const [i, line] of HOSTILE_TAGS_LINES.entries()) {
      const file = s.file(`tags-${i}.md`);
      await writeFile(file, `# R\n**Tags**: ${line}\n`);
      files.push(file);
    }
    // The agent logs its argv and exits 3 (the daemon then requeues: one more write of each
    // hostile name); the torture profile lets it mark the request done through the CLI instead.
    // A long grace: under this load a wrapper may need seconds to record its pid.
    const d = s.start(['--agent-cmd', template, '--max-agents', '8', '--claim-grace-ms', '60000'], {
      TEST_AGENT_MODE: TORTURE ? 'done' : 'exit',
    });
    const end = TORTURE ? '#done-fix' : '#needs-fix';
    for (const file of files) {
      await waitForTag(file, [end], 60_000).catch(async () => {
        throw new Error(
          `${JSON.stringify(file)} not done: ${await read(file)}\n${d.output().slice(-3000)}`,
        );
      });
    }
    const wrongArgv: string[] = [];
    for (const file of files) {
      const real = await realpath(file);
      const starts = s.agents().filter((a) => a.file === real);
      if (starts.length !== 1) wrongArgv.push(`${JSON.stringify(file)}: ${starts.length} agents`);
      const argv = starts[0]?.argv ?? [];
      const expected = [real, '/fix', 'fix', '#claimed-fix', starts[0]?.session];
      if (JSON.stringify(argv) !== JSON.stringify(expected))
        wrongArgv.push(`${JSON.stringify(file)}: argv ${JSON.stringify(argv)}`);
    }
    const injections = canaries([s.root, s.sessions, process.cwd(), homedir(), '/tmp']);
    recordFigure('injection', {
      hostileNames: HOSTILE_NAMES.length,
      hostileTagsLines: HOSTILE_TAGS_LINES.length,
      injections: injections.length,
      wrongArgv: wrongArgv.length,
    });
    expect(injections).toEqual([]);
    expect(wrongArgv).toEqual([]);
    for (const file of files) expect(tagsOf(await read(file))).toContain(end);
    expect(d.child.exitCode).toBeNull();
  }, 180_000);

  it('a skill in §TAG_DISPATCH that carries shell syntax is one argument, never a command', async () => {
    await writeFile(
      join(s.root, 'directives', 'TAGS.md'),
      `${TEST_TAGS_MD}| \`#delegated-evil\` | \`/x;touch PWNED-30 $(touch PWNED-31)\` | agent | 7 | yes |\n`,
    );
    const template = [process.execPath, TEST_AGENT, '{file}', '{skill}'].map(shellQuote).join(' ');
    const file = s.file('evil.md');
    await writeFile(file, '# R\n**Tags**: #delegated-evil\n');
    const d = s.start(['--agent-cmd', template]);
    const outcome = await waitFor(
      async () => {
        if (d.child.exitCode !== null) return 'refused';
        return tagsOf(await read(file)).includes('#done-evil') ? 'ran' : null;
      },
      { timeoutMs: 30_000, message: `evil.md done or the table refused; ${d.output()}` },
    );
    if (outcome === 'refused') expect(d.output()).toMatch(/^ERROR: /m);
    else
      expect(s.agents()[0]?.argv).toEqual([
        await realpath(file),
        '/x;touch PWNED-30 $(touch PWNED-31)',
      ]);
    expect(canaries([s.root, s.sessions, process.cwd(), homedir(), '/tmp'])).toEqual([]);
  }, 60_000);
});
