/**
 * Where Claude Code keeps what engine's agents depend on (docs/DOCTOR.md): with CLAUDE_CONFIG_DIR
 * set, everything is under it; else `~/.claude.json` (first run, folder trust, approved API keys)
 * and `~/.claude/` (settings.json, .credentials.json). A project adds `.claude/settings.json` and
 * `.claude/settings.local.json`, read after the user's, so theirs win.
 */
import { join } from 'node:path';
import { messageOf } from '../errors.js';
import type { DoctorContext } from './doctor-check.js';

export interface ClaudePaths {
  globalConfig: string;
  settings: string[];
  credentials: string;
}

export function claudePaths(
  home: string,
  env: NodeJS.ProcessEnv,
  root: string | null,
): ClaudePaths {
  const dir = env.CLAUDE_CONFIG_DIR;
  const configDir = dir !== undefined && dir !== '' ? dir : join(home, '.claude');
  const project =
    root === null
      ? []
      : [join(root, '.claude', 'settings.json'), join(root, '.claude', 'settings.local.json')];
  return {
    globalConfig:
      dir !== undefined && dir !== '' ? join(dir, '.claude.json') : join(home, '.claude.json'),
    settings: [join(configDir, 'settings.json'), ...project],
    credentials: join(configDir, '.credentials.json'),
  };
}

type Json = Record<string, unknown>;

/** A JSON object file: its object, null when absent, or the reason it is not one. */
export type JsonRead = { value: Json | null } | { path: string; error: string };

export async function readJsonObject(ctx: DoctorContext, path: string): Promise<JsonRead> {
  let text: string | null;
  try {
    text = await ctx.probe.readText(path);
  } catch (error) {
    return { path, error: messageOf(error) };
  }
  if (text === null) return { value: null };
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      return { value: value as Json };
    return { path, error: 'not a JSON object' };
  } catch (error) {
    return { path, error: messageOf(error) };
  }
}

/** The settings that decide an unattended run, merged over the files in order (later wins). */
export interface MergedSettings {
  allow: string[];
  deny: string[];
  defaultMode: string | null;
  autoModeDisabled: boolean;
  apiKeyHelper: string | null;
  cleanupPeriodDays: number | null;
  /** The files that set something, for the messages; and files that could not be read. */
  read: string[];
  broken: string[];
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

export async function mergedSettings(ctx: DoctorContext, paths: string[]): Promise<MergedSettings> {
  const merged: MergedSettings = {
    allow: [],
    deny: [],
    defaultMode: null,
    autoModeDisabled: false,
    apiKeyHelper: null,
    cleanupPeriodDays: null,
    read: [],
    broken: [],
  };
  for (const path of paths) {
    const read = await readJsonObject(ctx, path);
    if ('error' in read) merged.broken.push(`${path}: ${read.error}`);
    if (!('value' in read) || read.value === null) continue;
    merged.read.push(path);
    const settings = read.value;
    const permissions = (settings.permissions ?? {}) as Json;
    merged.allow.push(...strings(permissions.allow));
    merged.deny.push(...strings(permissions.deny));
    if (typeof permissions.defaultMode === 'string') merged.defaultMode = permissions.defaultMode;
    if (settings.disableAutoMode !== undefined)
      merged.autoModeDisabled = settings.disableAutoMode === 'disable';
    if (typeof settings.apiKeyHelper === 'string') merged.apiKeyHelper = settings.apiKeyHelper;
    if (typeof settings.cleanupPeriodDays === 'number')
      merged.cleanupPeriodDays = settings.cleanupPeriodDays;
  }
  return merged;
}
