/**
 * Reading the settings of a project: each from the first of its flag, its environment variable,
 * `directives/engine.json`, its default (setting-table.ts). So that a flag's default cannot hide
 * engine.json, the flags carry no defaults; defaults are applied here. The daemon, `engine
 * status`, `attach` and `logs` read settings here, so they judge claims alike.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EngineError, isErrnoException, messageOf } from '../errors.js';
import type { JudgeOptions } from '../sessions/judge-session.js';
import {
  COMMENT_KEY,
  defaultSettings,
  ENGINE_JSON,
  SETTING_NAMES,
  SETTINGS,
  type Setting,
  type SettingName,
  type Settings,
} from './setting-table.js';

export type SettingSource = 'flag' | 'env' | 'engine.json' | 'default';

/** A value converted by its setting's row, else an error naming `label`, the expected and what came. */
function checked(
  name: SettingName,
  typed: unknown,
  label: string,
  shown: string,
  inFile = false,
): Settings[SettingName] {
  const read = (SETTINGS[name] as Setting<Settings[SettingName]>).read(typed);
  if ('value' in read) return read.value;
  if ('reason' in read) throw new EngineError(`${label}: ${read.reason}`);
  // A flag or variable echoes what was typed: `Invalid --retries 'two': expected ...`.
  throw new EngineError(
    inFile
      ? `${label} must be ${read.expected}, got ${shown}`
      : `Invalid ${label} ${shown}: expected ${read.expected}`,
  );
}

const KEYS = new Map(SETTING_NAMES.map((name) => [SETTINGS[name].key, name]));

/**
 * The settings in `text`, the contents of `file` (an engine.json), by name and converted: every
 * key known and every value valid, or an error naming the file, the key and what was expected.
 */
export function parseEngineJson(text: string, file: string): Partial<Settings> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new EngineError(`${file} is not valid JSON: ${messageOf(error)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new EngineError(
      `${file} must hold a JSON object of settings, got ${JSON.stringify(parsed)}`,
    );
  const settings: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (key === COMMENT_KEY) continue;
    const name = KEYS.get(key);
    if (name === undefined) {
      const keys = [...KEYS.keys()].join(', ');
      throw new EngineError(
        `${file}: unknown setting "${key}"; expected one of ${keys} (or "${COMMENT_KEY}")`,
      );
    }
    settings[name] = checked(name, value, `${file}: "${key}"`, JSON.stringify(value), true);
  }
  return settings as Partial<Settings>;
}

/** `<root>/directives/engine.json`'s settings; none when there is no such file. */
export async function readEngineJson(root: string): Promise<Partial<Settings>> {
  const file = join(root, ENGINE_JSON);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (isErrnoException(error) && error.code === 'ENOENT') return {};
    throw new EngineError(`cannot read ${file}: ${messageOf(error)}`);
  }
  return parseEngineJson(text, file);
}

export interface SettingsSources {
  /** Flag values by setting name; undefined (or an empty string) where the flag was not given. */
  flags: Partial<Record<SettingName, unknown>>;
  env: NodeJS.ProcessEnv;
  /** engine.json's settings, already checked (readEngineJson). */
  file: Partial<Settings>;
}

/** The flags of `args` (parsed by yargs, by flag name) that are settings, by setting name. */
export function settingFlagValues(args: Record<string, unknown>): SettingsSources['flags'] {
  return Object.fromEntries(SETTING_NAMES.map((name) => [name, args[SETTINGS[name].flag]]));
}

/** Each setting from the first source that has it: flag, environment, engine.json, default. */
export function resolveSettings(sources: SettingsSources): {
  settings: Settings;
  from: Record<SettingName, SettingSource>;
} {
  const settings: Record<string, unknown> = defaultSettings() as unknown as Record<string, unknown>;
  const from: Record<string, SettingSource> = {};
  for (const name of SETTING_NAMES) {
    const setting: Setting<unknown> = SETTINGS[name];
    const flag = sources.flags[name];
    const env = sources.env[setting.env];
    if (flag !== undefined && flag !== '') {
      // A number flag comes as typed text (settingFlag), as an environment variable does.
      const typed = typeof flag === 'string' ? setting.fromText(flag) : flag;
      settings[name] = checked(name, typed, `--${setting.flag}`, `'${String(flag)}'`);
      from[name] = 'flag';
    } else if (env !== undefined && env !== '') {
      settings[name] = checked(name, setting.fromText(env), setting.env, `'${env}'`);
      from[name] = 'env';
    } else if (Object.hasOwn(sources.file, name)) {
      settings[name] = sources.file[name];
      from[name] = 'engine.json';
    } else {
      from[name] = 'default';
    }
  }
  return {
    settings: settings as unknown as Settings,
    from: from as Record<SettingName, SettingSource>,
  };
}

/** The settings of the project at `root`: from `flags`, the environment, its engine.json. */
export async function loadSettings(
  root: string,
  flags: SettingsSources['flags'],
  env: NodeJS.ProcessEnv,
): Promise<ReturnType<typeof resolveSettings>> {
  return resolveSettings({ flags, env, file: await readEngineJson(root) });
}

/** How claims are judged under these settings (sessions/judge-session.ts). */
export function judgeOptionsOf(settings: Settings): JudgeOptions {
  return { claimGraceMs: settings.claimGraceMs, staleAfterMs: settings.staleAfterMs };
}

/** The shared remote whose claims `engine status` lists: with `"claims": "git"` only, else null. */
export function hostsRemoteOf(settings: Settings): string | null {
  return settings.claims === 'git' ? settings.claimsRemote : null;
}

/** How the daemon of the project at `root` judges claims, unless its flags say otherwise. */
export async function projectJudgeOptions(
  root: string,
  env: NodeJS.ProcessEnv,
): Promise<JudgeOptions> {
  return judgeOptionsOf((await loadSettings(root, {}, env)).settings);
}
