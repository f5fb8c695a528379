import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkNumberOption, numberFlag } from '../../src/daemon/daemon-options.js';
import { runCli } from '../helpers/run-cli.js';

describe('the daemon options', () => {
  it('takes a value in range as it is', () => {
    expect(checkNumberOption('poll-ms', 50)).toBe(50);
    expect(checkNumberOption('stale-after', 0.5)).toBe(0.5);
    expect(checkNumberOption('max-agents', 0)).toBe(0);
  });

  it.each([
    [
      'poll-ms',
      10,
      /--poll-ms must be a whole number of milliseconds from 50 to 2147483647, got '10'/,
    ],
    ['rescan-interval-ms', 99, /from 100 /],
    ['heartbeat-ms', 2 ** 31, /to 2147483647, got '2147483648'/],
    ['max-agents', 1.5, /--max-agents must be a whole number of agents from 0 up, got '1.5'/],
    ['stale-after', -1, /--stale-after must be a number of minutes from 0 up, got '-1'/],
    ['debounce-ms', NaN, /got 'NaN'/],
    ['aging', -5, /--aging must be a number of minutes from 0 up, got '-5'/],
  ] as const)(
    'refuses --%s %s, saying what it expected, never raising it silently',
    (name, value, message) => {
      expect(() => checkNumberOption(name, value)).toThrow(message);
    },
  );

  it("says each flag's minimum and default, but gives yargs no default that would hide engine.json", () => {
    const flag = numberFlag('poll-ms');
    expect(flag.describe).toMatch(/at least 50 \(default 5000; engine.json "pollMs"\)$/);
    expect(flag).not.toHaveProperty('default');
  });

  it('makes engine run refuse an out-of-range value before it starts', async () => {
    const root = await mkdtemp(join(tmpdir(), 'engine-options-'));
    await mkdir(join(root, 'directives'));
    await writeFile(join(root, 'directives', 'engine.json'), '{}\n');
    const result = await runCli(
      ['run', '--monitor-tags', '--once', '--root', root, '--poll-ms', '10'],
      {
        cwd: root,
      },
    );
    await rm(root, { recursive: true, force: true });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /ERROR: --poll-ms must be a whole number of milliseconds from 50/,
    );
  });
});
