/**
 * The daemon's settings: `directives/engine.json` holds every one, and each comes from the first
 * of flag, environment variable, engine.json, default. Bad engine.json is an error naming the
 * file, the key and what was expected. Real files; the CLI cases run the built binary.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  readEngineJson,
  resolveSettings,
  type SettingsSources,
} from '../../src/settings/load-settings.js';
import {
  defaultSettings,
  SETTING_NAMES,
  SETTINGS,
  settingFlag,
} from '../../src/settings/setting-table.js';
import { engine, makeTempDir, type TempDir } from '../cli/fixtures.js';

let t: TempDir;

beforeEach(async () => {
  t = await makeTempDir('engine-settings-');
});

afterEach(async () => {
  await t.cleanup();
});

async function writeEngineJson(value: unknown): Promise<string> {
  await mkdir(t.path('directives'), { recursive: true });
  const file = t.path('directives', 'engine.json');
  await writeFile(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
}

async function resolveFrom(
  json: unknown,
  flags: SettingsSources['flags'] = {},
  env: NodeJS.ProcessEnv = {},
): Promise<ReturnType<typeof resolveSettings>> {
  if (json !== undefined) await writeEngineJson(json);
  return resolveSettings({ flags, env, file: await readEngineJson(t.dir) });
}

describe('settings precedence: flag > environment variable > engine.json > default', () => {
  it('uses every default when there is no engine.json', async () => {
    const { settings, from } = await resolveFrom(undefined);
    expect(settings).toEqual(defaultSettings());
    expect(new Set(Object.values(from))).toEqual(new Set(['default']));
    expect(settings).toMatchObject({
      pollMs: 5000,
      agent: 'claude',
      agentCommand: null,
      claudeBin: null,
      runner: 'tmux',
      tmuxSocket: null,
      tmuxSession: 'dispatch',
      monitor: ['#delegated-*'],
      staleAfterMs: 45 * 60_000,
      notifyVia: ['desktop', 'tmux'],
    });
  });

  it('takes every setting from engine.json over its default, by its key, in the one unit', async () => {
    const json = {
      monitorTags: '#delegated-fix',
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
      claimGraceMs: 0,
      staleAfter: 0.5,
      closeAfterDone: 0.25,
      heartbeatMs: 400,
      pollMs: 50,
      retries: 2,
      retryBackoffMs: 500,
      limitBackoff: 0.5,
      aging: 90,
      worktree: true,
      notify: 'notify-me {event} {file}',
      notifyVia: 'tmux',
      logFile: 'logs/daemon.log',
      claims: 'git',
      claimsRemote: 'upstream',
      claimsBranch: 'queue',
      claimsFetchMs: 2000,
      claimsLeaseMs: 30_000,
    };
    expect(Object.keys(json).sort()).toEqual(SETTING_NAMES.map((n) => SETTINGS[n].key).sort());
    const { settings, from } = await resolveFrom(json);
    expect(settings).toEqual({
      ...json,
      monitorTags: undefined,
      monitor: ['#delegated-fix'],
      staleAfter: undefined,
      staleAfterMs: 30_000,
      closeAfterDone: undefined,
      closeAfterDoneMs: 15_000,
      limitBackoff: undefined,
      limitBackoffMs: 30_000,
      aging: undefined,
      agingMs: 90 * 60_000,
      notifyVia: ['tmux'],
    });
    expect(new Set(Object.values(from))).toEqual(new Set(['engine.json']));
  });

  it('takes a flag over engine.json, for numbers and text alike', async () => {
    const { settings, from } = await resolveFrom(
      { pollMs: 100, agent: 'claude-print', tmuxSession: 'file' },
      { pollMs: 200, agent: 'custom', tmuxSession: 'flag' },
    );
    expect(settings).toMatchObject({ pollMs: 200, agent: 'custom', tmuxSession: 'flag' });
    expect(from).toMatchObject({ pollMs: 'flag', agent: 'flag', tmuxSession: 'flag' });
  });

  it.each([
    ['agentCommand', 'ENGINE_AGENT_CMD', 'from-file {file}', 'from-env {file}', 'from-flag {file}'],
    ['tmuxSocket', 'ENGINE_TMUX_SOCKET', 'file-sock', 'env-sock', 'flag-sock'],
  ] as const)('takes %s from the flag, else %s, else engine.json', async (name, env, f, e, g) => {
    await writeEngineJson({ [name]: f });
    const file = await readEngineJson(t.dir);
    const pick = (flags: SettingsSources['flags'], vars: NodeJS.ProcessEnv) =>
      resolveSettings({ flags, env: vars, file });
    expect(pick({ [name]: g }, { [env]: e }).settings[name]).toBe(g);
    expect(pick({}, { [env]: e }).settings[name]).toBe(e);
    expect(pick({}, {}).settings[name]).toBe(f);
    // An empty flag or variable counts as not given, as ENGINE_AGENT_CMD= always did.
    expect(pick({ [name]: '' }, { [env]: '' }).settings[name]).toBe(f);
  });

  it('checks a flag or variable too, naming it', () => {
    expect(() => resolveSettings({ flags: { pollMs: 10 }, env: {}, file: {} })).toThrow(
      "Invalid --poll-ms '10': expected a whole number of milliseconds from 50 to 2147483647",
    );
    expect(() =>
      resolveSettings({ flags: {}, env: { ENGINE_AGENT_CMD: "a 'b" }, file: {} }),
    ).toThrow(/^ENGINE_AGENT_CMD: Agent command template has an unclosed ' quote/);
  });

  it('gives the flags no default, so that engine.json is not hidden', () => {
    for (const name of SETTING_NAMES) expect(settingFlag(name)).not.toHaveProperty('default');
  });
});

describe('bad engine.json', () => {
  it.each([
    ['{"pollMs": 100,}', /engine\.json is not valid JSON: /],
    ['[1]', /engine\.json must hold a JSON object of settings, got \[1\]/],
    [
      { pollMS: 100 },
      /engine\.json: unknown setting "pollMS"; expected one of monitorTags, agent, agentCommand, .*pollMs.* \(or "\$comment"\)$/,
    ],
    [
      { pollMs: 10 },
      /engine\.json: "pollMs" must be a whole number of milliseconds from 50 to 2147483647, got 10$/,
    ],
    [{ pollMs: '100' }, /"pollMs" must be a whole number of milliseconds .*, got "100"$/],
    [{ maxAgents: 1.5 }, /"maxAgents" must be a whole number of agents from 0 up, got 1.5$/],
    [
      { notify: 'n {skill}' },
      /"notify": Notification command template has an unknown placeholder \{skill\}/,
    ],
    [{ notifyVia: 'email' }, /"notifyVia": unknown notification channel 'email'/],
    [{ staleAfter: -1 }, /"staleAfter" must be a number of minutes from 0 up, got -1$/],
    [{ agent: 'gpt' }, /"agent" must be one of 'claude', 'claude-print', 'custom', got "gpt"$/],
    [{ runner: 3 }, /"runner" must be one of 'tmux', 'pty', got 3$/],
    [{ worktree: 'yes' }, /"worktree" must be true or false, got "yes"$/],
    [{ tmuxSocket: '' }, /"tmuxSocket" must be a tmux server name, or null, got ""$/],
    [{ tmuxSession: null }, /"tmuxSession" must be a tmux session name, got null$/],
    [{ agentCommand: 5 }, /"agentCommand" must be a command template, or null, got 5$/],
    [{ claudeBin: '' }, /"claudeBin" must be a program name or path, or null, got ""$/],
    [
      { agentCommand: 'x {nope}' },
      /"agentCommand": Agent command template has an unknown placeholder \{nope\}/,
    ],
    [{ monitorTags: '#needs-*' }, /"monitorTags": Refusing to monitor '#needs-\*'/],
  ])('refuses %j, naming the file, the key and what was expected', async (json, message) => {
    const file = await writeEngineJson(json);
    const error = await readEngineJson(t.dir).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error?.message.startsWith(file)).toBe(true);
    expect(error?.message).toMatch(message);
  });

  it('accepts a "$comment", which it does not read', async () => {
    await writeEngineJson({ $comment: 'see ENGINE.md', pollMs: 60 });
    expect(await readEngineJson(t.dir)).toEqual({ pollMs: 60 });
  });
});

describe('engine run with engine.json', () => {
  // The program check runs before anything starts (but for --dry-run, which starts no agent), so
  // its error shows which command won.
  const program = async (env: NodeJS.ProcessEnv, args: string[] = []) => {
    const result = await engine(
      t.dir,
      ['run', '--monitor-tags', '--once', '--root', t.dir, ...args],
      env,
    );
    expect(result.code).toBe(1);
    return /The agent program '([^']*)' is not on PATH/.exec(result.stderr)?.[1];
  };

  it('runs the agentCommand of engine.json, unless ENGINE_AGENT_CMD or --agent-cmd says otherwise', async () => {
    await writeEngineJson({ agentCommand: 'engine-test-from-json {file}' });
    expect(await program({ ENGINE_AGENT_CMD: '' })).toBe('engine-test-from-json');
    expect(await program({ ENGINE_AGENT_CMD: 'engine-test-from-env' })).toBe(
      'engine-test-from-env',
    );
    expect(
      await program({ ENGINE_AGENT_CMD: 'engine-test-from-env' }, [
        '--agent-cmd',
        'engine-test-from-flag',
      ]),
    ).toBe('engine-test-from-flag');
  });

  it('stops at start on a bad engine.json, with the file, the key and what was expected', async () => {
    const file = await writeEngineJson({ pollMs: 10 });
    const result = await engine(t.dir, ['run', '--monitor-tags', '--once', '--root', t.dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `ERROR: ${file}: "pollMs" must be a whole number of milliseconds from 50 to 2147483647, got 10\n`,
    );
  });

  it('refuses a bad engine.json even where a flag overrides the key: nothing is ignored silently', async () => {
    const file = await writeEngineJson({ agent: 'gpt' });
    const result = await engine(t.dir, [
      'run',
      '--monitor-tags',
      '--dry-run',
      '--root',
      t.dir,
      '--agent',
      'custom',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`ERROR: ${file}: "agent" must be one of`);
  });
});

it('a directives/ directory without engine.json is no error', async () => {
  await mkdir(join(t.dir, 'directives'));
  expect(await readEngineJson(t.dir)).toEqual({});
});
