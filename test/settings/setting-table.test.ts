/**
 * The settings table: every setting has its flag, environment variable, engine.json key, unit and
 * default, and each source gives the same value in the one unit inside. The flags are parsed by
 * `engine run`'s own yargs builder, engine.json is a real file.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import yargs, { type Argv } from 'yargs';
import { runCommand } from '../../src/cli/run.js';
import {
  readEngineJson,
  resolveSettings,
  settingFlagValues,
} from '../../src/settings/load-settings.js';
import {
  defaultSettings,
  SETTING_NAMES,
  SETTINGS,
  type SettingName,
} from '../../src/settings/setting-table.js';
import { makeTempDir, type TempDir } from '../cli/fixtures.js';

/** A value of each setting other than its default, as a person types it. */
const TYPED: Record<SettingName, string | number | boolean> = {
  monitor: '#delegated-fix,#delegated-chores',
  agent: 'claude-print',
  agentCommand: 'my-agent {file}',
  claudeBin: '/opt/claude',
  runner: 'pty',
  tmuxSocket: 'sock',
  tmuxSession: 'work',
  maxAgents: 2,
  debounceMs: 10,
  watch: false,
  watcher: 'chokidar',
  rescanIntervalMs: 200,
  reapIntervalMs: 300,
  claimGraceMs: 7,
  staleAfterMs: 0.5,
  closeAfterDoneMs: 0.25,
  heartbeatMs: 400,
  pollMs: 50,
  retries: 2,
  retryBackoffMs: 500,
  limitBackoffMs: 1.5,
  agingMs: 2.5,
  worktree: true,
  notify: 'notify-me {event}',
  notifyVia: 'tmux',
  logFile: 'logs/daemon.log',
  claims: 'git',
  claimsRemote: 'upstream',
  claimsBranch: 'queue',
  claimsFetchMs: 2000,
  claimsLeaseMs: 30_000,
};

/** What `engine run` makes of `argv`, through its own builder. */
function parseRunFlags(argv: string[]): Record<string, unknown> {
  const builder = runCommand.builder as (y: Argv) => Argv;
  return builder(yargs(argv)).parseSync() as Record<string, unknown>;
}

let t: TempDir;

beforeEach(async () => {
  t = await makeTempDir('engine-setting-table-');
});

afterEach(async () => {
  await t.cleanup();
});

describe('the settings table', () => {
  it('gives every setting a flag, an environment variable, an engine.json key, a unit and a default', () => {
    for (const name of SETTING_NAMES) {
      const row = SETTINGS[name];
      expect(row.flag, name).toMatch(/^[a-z][a-z-]*$/);
      // One key space: the variable is the flag's name, in capitals, after ENGINE_.
      expect(row.env, name).toBe(`ENGINE_${row.flag.toUpperCase().replace(/-/g, '_')}`);
      expect(row.key, name).toMatch(/^[a-z][A-Za-z]*$/);
      expect(row.unit, name).toBeTruthy();
      expect(row.default, name).not.toBeUndefined();
      expect(row.describe, name).toBeTruthy();
      expect(row.read(row.default), name).toHaveProperty('value');
      if (row.flagType === 'number') expect(row.range, name).toBeDefined();
    }
    for (const column of ['flag', 'env', 'key'] as const) {
      const values = SETTING_NAMES.map((name) => SETTINGS[name][column]);
      expect(new Set(values).size, column).toBe(values.length);
    }
  });

  it('holds every duration in milliseconds, whatever unit it is typed in', () => {
    for (const name of SETTING_NAMES) {
      const unit = SETTINGS[name].unit;
      if (unit === 'milliseconds' || unit === 'minutes') expect(name).toMatch(/Ms$/);
    }
    expect(defaultSettings()).toMatchObject({
      staleAfterMs: 45 * 60_000,
      closeAfterDoneMs: 5 * 60_000,
      limitBackoffMs: 15 * 60_000,
    });
  });

  it.each(SETTING_NAMES)(
    'resolves %s to the same value from its flag, its variable and engine.json',
    async (name) => {
      const row = SETTINGS[name];
      const typed = TYPED[name];
      const argv =
        typeof typed === 'boolean'
          ? [typed ? `--${row.flag}` : `--no-${row.flag}`]
          : [`--${row.flag}`, String(typed)];
      const byFlag = resolveSettings({
        flags: settingFlagValues(parseRunFlags(argv)),
        env: {},
        file: {},
      });
      const byEnv = resolveSettings({ flags: {}, env: { [row.env]: String(typed) }, file: {} });
      await mkdir(t.path('directives'));
      await writeFile(t.path('directives', 'engine.json'), JSON.stringify({ [row.key]: typed }));
      const byFile = resolveSettings({ flags: {}, env: {}, file: await readEngineJson(t.dir) });
      expect([byFlag.from[name], byEnv.from[name], byFile.from[name]]).toEqual([
        'flag',
        'env',
        'engine.json',
      ]);
      const value = byFile.settings[name];
      expect(byFlag.settings[name]).toEqual(value);
      expect(byEnv.settings[name]).toEqual(value);
      expect(value).not.toEqual(defaultSettings()[name]);
      if (row.unit === 'minutes') expect(value).toBe((typed as number) * 60_000);
    },
  );

  it('refuses a variable that is not a value of its setting, naming the variable', () => {
    const resolve = (env: NodeJS.ProcessEnv) => () => resolveSettings({ flags: {}, env, file: {} });
    expect(resolve({ ENGINE_POLL_MS: 'soon' })).toThrow(
      "Invalid ENGINE_POLL_MS 'soon': expected a whole number of milliseconds from 50 to 2147483647",
    );
    expect(resolve({ ENGINE_WORKTREE: 'yes' })).toThrow(
      "Invalid ENGINE_WORKTREE 'yes': expected true or false",
    );
    expect(resolve({ ENGINE_RUNNER: 'ssh' })).toThrow(
      "Invalid ENGINE_RUNNER 'ssh': expected one of 'tmux', 'pty'",
    );
  });

  it('is the settings table of docs/DAEMON.md: each flag, key and variable on one row', async () => {
    const doc = await readFile(new URL('../../docs/DAEMON.md', import.meta.url), 'utf8');
    for (const name of SETTING_NAMES) {
      const { flag, key, env } = SETTINGS[name];
      const start = new RegExp(`^\\| \`--${flag}(?![a-z-])`);
      const row = doc.split('\n').find((line) => start.test(line));
      expect(row, flag).toContain(`| \`${key}\` |`);
      expect(row, flag).toContain(`\`${env}\``);
    }
  });
});
