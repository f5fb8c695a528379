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
      /^Invalid --poll-ms '10': expected a whole number of milliseconds from 50 to 2147483647$/,
    ],
    ['rescanIntervalMs', 99, /from 100 /],
    ['heartbeatMs', 2 ** 31, /^Invalid --heartbeat-ms '2147483648': expected .* to 2147483647$/],
    ['maxAgents', 1.5, /^Invalid --max-agents '1.5': expected a whole number of agents from 0 up$/],
    ['staleAfterMs', -1, /^Invalid --stale-after '-1': expected a number of minutes from 0 up$/],
    ['agingMs', -5, /^Invalid --aging '-5': expected a number of minutes from 0 up$/],
    // As typed on the command line: text, echoed as typed.
    ['retries', 'two', /^Invalid --retries 'two': expected a whole number of retries from 0 up$/],
    ['debounceMs', '0x10', /^Invalid --debounce-ms '0x10': expected a whole number/],
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
      /ERROR: Invalid --poll-ms '10': expected a whole number of milliseconds from 50/,
    );
  });

  it.each([
    ['--retries', 'two', 'a whole number of retries from 0 up'],
    ['--poll-ms', '1e3', 'a whole number of milliseconds from 50 to 2147483647'],
    ['--stale-after', 'soon', 'a number of minutes from 0 up'],
    ['--board-port', '70000', 'a whole number from 0 to 65535'],
  ])('engine run %s %s echoes what was typed', async (flag, value, expected) => {
    const root = await mkdtemp(join(tmpdir(), 'engine-options-'));
    await mkdir(join(root, 'directives'));
    await writeFile(join(root, 'directives', 'engine.json'), '{}\n');
    const result = await runCli([
      'run',
      '--monitor-tags',
      '--dry-run',
      '--root',
      root,
      flag,
      value,
    ]);
    await rm(root, { recursive: true, force: true });
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: `ERROR: Invalid ${flag} '${value}': expected ${expected}\n`,
    });
  });
});
