/** A doctor context over an injected probe: each test changes only what makes its check fail. */
import { readFile } from 'node:fs/promises';
import { agentLaunch } from '../../src/doctor/agent-program.js';
import type { DoctorContext, DoctorProbe } from '../../src/doctor/doctor-check.js';
import { defaultSettings, type Settings } from '../../src/settings/setting-table.js';

export const HOME = '/home/u';
export const ROOT = '/work/proj';

/** A probe where everything is well; `files` are the files it reads (others: the real disk). */
export function probeOf(
  files: Record<string, string> = {},
  over: Partial<DoctorProbe> = {},
): DoctorProbe {
  return {
    nodeVersion: '22.1.0',
    nodeRange: '>=20.19',
    platform: 'linux',
    uid: 1000,
    home: HOME,
    readText: async (path) => files[path] ?? (await readFile(path, 'utf8').catch(() => null)),
    findProgram: (program) => `/usr/bin/${program}`,
    run: async (file) => ({
      ok: true,
      stdout: file.endsWith('claude') ? '2.1.330 (Claude Code)\n' : 'tmux 3.3a\n',
    }),
    watchesNeeded: async () => 10,
    liveness: () => 'dead',
    socketAnswers: async () => null,
    writeStamp: async () => ({ before: 1000, mtime: 1000, after: 1001 }),
    pushTestRefs: async () => ({ kind: 'accepted', ref: 'refs/engine/doctor/0', message: '' }),
    ...over,
  };
}

export function contextOf(
  over: Partial<Omit<DoctorContext, 'settings'>> & { settings?: Partial<Settings> } = {},
): DoctorContext {
  return {
    root: ROOT,
    env: { PATH: '/usr/bin' },
    settingsError: null,
    agent: agentLaunch('claude', 'claude'),
    table: null,
    probe: probeOf(),
    ...over,
    settings: { ...defaultSettings(), ...over.settings },
  };
}

export const json = (value: unknown): string => JSON.stringify(value);
