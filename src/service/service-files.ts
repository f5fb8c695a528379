/**
 * `engine service install|uninstall|status`: the unit file of a root's daemon in the user's
 * service manager (systemd --user on Linux, launchd on macOS), and the manager's commands. Where
 * the manager cannot be reached (no user bus, as in containers), the file is still written and the
 * commands are returned as not run, for the user to run.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EngineError, isErrnoException } from '../errors.js';
import {
  launchdLabel,
  launchdPlist,
  serviceName,
  systemdUnit,
  WRITTEN_BY,
  type ServiceSpec,
} from './service-unit.js';

export type ServiceManager = 'systemd' | 'launchd';

export interface ServiceFile {
  manager: ServiceManager;
  name: string;
  path: string;
  /** The manager's commands, in order: to start it, to stop it, to show it. */
  install: string[][];
  uninstall: string[][];
  status: string[];
  /** Restarts it if it runs: a replaced file takes effect. */
  restart: string[];
}

export interface Where {
  manager: ServiceManager;
  home: string;
  /** systemd's user configuration directory: $XDG_CONFIG_HOME, else ~/.config. */
  configHome?: string;
  uid: number;
}

/** The service file of `root` and the commands that drive it. */
export function serviceFile(root: string, where: Where): ServiceFile {
  const name = serviceName(root);
  if (where.manager === 'launchd') {
    const label = launchdLabel(root);
    const path = join(where.home, 'Library', 'LaunchAgents', `${label}.plist`);
    const domain = `gui/${where.uid}`;
    return {
      manager: 'launchd',
      name: label,
      path,
      install: [['launchctl', 'bootstrap', domain, path]],
      uninstall: [['launchctl', 'bootout', `${domain}/${label}`]],
      status: ['launchctl', 'print', `${domain}/${label}`],
      restart: ['launchctl', 'kickstart', '-k', `${domain}/${label}`],
    };
  }
  const unit = `${name}.service`;
  const dir = join(where.configHome ?? join(where.home, '.config'), 'systemd', 'user');
  return {
    manager: 'systemd',
    name: unit,
    path: join(dir, unit),
    install: [
      ['systemctl', '--user', 'daemon-reload'],
      ['systemctl', '--user', 'enable', '--now', unit],
    ],
    uninstall: [
      ['systemctl', '--user', 'disable', '--now', unit],
      ['systemctl', '--user', 'daemon-reload'],
    ],
    status: ['systemctl', '--user', 'status', '--no-pager', unit],
    restart: ['systemctl', '--user', 'try-restart', unit],
  };
}

export function serviceContent(file: ServiceFile, spec: ServiceSpec): string {
  return file.manager === 'launchd' ? launchdPlist(spec) : systemdUnit(spec);
}

/** The file's text, or null when there is none. */
export async function readServiceFile(file: ServiceFile): Promise<string | null> {
  try {
    return await readFile(file.path, 'utf8');
  } catch (error) {
    if (isErrnoException(error) && error.code === 'ENOENT') return null;
    throw error;
  }
}

/** Writes the file; refuses to replace one engine did not write. */
export async function writeServiceFile(
  file: ServiceFile,
  content: string,
): Promise<'written' | 'replaced' | 'unchanged'> {
  const before = await readServiceFile(file);
  if (before === content) return 'unchanged';
  if (before !== null && !before.includes(WRITTEN_BY))
    throw new EngineError(`${file.path} exists and was not written by engine: move it away first`);
  await mkdir(join(file.path, '..'), { recursive: true });
  // 0600, also when replacing a file of another mode: it names the root and the environment.
  await writeFile(file.path, content, { mode: 0o600 });
  await chmod(file.path, 0o600);
  return before === null ? 'written' : 'replaced';
}

/** Removes the file engine wrote; false when there is none. */
export async function removeServiceFile(file: ServiceFile): Promise<boolean> {
  const before = await readServiceFile(file);
  if (before === null) return false;
  if (!before.includes(WRITTEN_BY))
    throw new EngineError(`${file.path} was not written by engine: left as it is`);
  await unlink(file.path);
  return true;
}

export interface CommandRun {
  command: string[];
  /** null: not run, an earlier command failed. */
  code: number | null;
  output: string;
}

/** Runs the commands in order; after the first failure the rest are returned as not run. */
export async function runCommands(
  commands: string[][],
  env: NodeJS.ProcessEnv,
): Promise<CommandRun[]> {
  const runs: CommandRun[] = [];
  let failed = false;
  for (const command of commands) {
    if (failed) {
      runs.push({ command, code: null, output: '' });
      continue;
    }
    const run = await runOne(command, env);
    failed = run.code !== 0;
    runs.push(run);
  }
  return runs;
}

/** One command to its end (10 s at most); its exit code and its output, both streams. */
export function runOne(command: string[], env: NodeJS.ProcessEnv): Promise<CommandRun> {
  const [program, ...args] = command as [string, ...string[]];
  return new Promise((resolve) => {
    execFile(program, args, { env, timeout: 10_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 127) : 0;
      const output = `${stdout}${stderr}`.trim() || (error?.message ?? '');
      resolve({ command, code, output });
    });
  });
}
