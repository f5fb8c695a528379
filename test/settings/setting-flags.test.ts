import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveSettings } from '../../src/settings/load-settings.js';
import { settingFlag, type SettingName } from '../../src/settings/setting-table.js';
import { runCli } from '../helpers/run-cli.js';

/** The setting a flag value resolves to. */
const fromFlag = (name: SettingName, value: unknown): unknown =>
  resolveSettings({ flags: { [name]: value }, env: {}, file: {} }).settings[name];

describe('the numeric settings', () => {
  it('takes a value in range, in the one unit', () => {
    expect(fromFlag('pollMs', 50)).toBe(50);
    expect(fromFlag('staleAfterMs', 0.5)).toBe(30_000);
    expect(fromFlag('maxAgents', 0)).toBe(0);
  });

  it.each([
    [
      'pollMs',
      10,
      /--poll-ms must be a whole number of milliseconds from 50 to 2147483647, got '10'/,
    ],
    ['rescanIntervalMs', 99, /from 100 /],
    ['heartbeatMs', 2 ** 31, /to 2147483647, got '2147483648'/],
    ['maxAgents', 1.5, /--max-agents must be a whole number of agents from 0 up, got '1.5'/],
    ['staleAfterMs', -1, /--stale-after must be a number of minutes from 0 up, got '-1'/],
    ['agingMs', -5, /--aging must be a number of minutes from 0 up, got '-5'/],
    ['debounceMs', NaN, /got 'NaN'/],
  ] as const)(
    'refuses %s %s, naming its flag and saying what it expected, never raising it silently',
    (name, value, message) => {
      expect(() => fromFlag(name, value)).toThrow(message);
    },
  );

  it("says each flag's minimum and default, but gives yargs no default that would hide engine.json", () => {
    const flag = settingFlag('pollMs');
    expect(flag.describe).toMatch(
      /at least 50 \(default 5000; env ENGINE_POLL_MS; engine.json "pollMs"\)$/,
    );
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
