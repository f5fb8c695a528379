/**
 * `engine service install|uninstall|status` with HOME in a temp directory and no user bus (as in
 * CI containers, and made so on a desktop too: the test never enables a real service).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serviceName } from '../../src/service/service-unit.js';
import { useDaemonHarness, waitForReady } from '../helpers/daemon-harness.js';
import { CLI, runCli } from '../helpers/run-cli.js';

let home: string;
let root: string;
let env: NodeJS.ProcessEnv;
let unitPath: string;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'engine-service-home-'));
  root = await mkdtemp(join(tmpdir(), 'engine-service-root-'));
  await mkdir(join(root, 'directives'));
  await writeFile(join(root, 'directives', 'engine.json'), '{}\n');
  await mkdir(join(home, 'run'), { mode: 0o700 });
  env = { ...process.env, HOME: home, XDG_RUNTIME_DIR: join(home, 'run') };
  env.DBUS_SESSION_BUS_ADDRESS = `unix:path=${join(home, 'run', 'no-bus')}`;
  delete env.XDG_CONFIG_HOME;
  env.ANTHROPIC_API_KEY = 'sk-ant-test-secret';
  unitPath = join(home, '.config', 'systemd', 'user', `${serviceName(root)}.service`);
});

afterEach(async () => {
  await rm(home, { recursive: true, force: true });
  await rm(root, { recursive: true, force: true });
});

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => !e.isDirectory())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

const service = (...args: string[]) => runCli(['service', ...args, '--root', root], { env });

describe('engine service (systemd, no user bus)', () => {
  it('install writes the unit, says systemctl --user is not usable and how to enable it, exit 0', async () => {
    const result = await service('install');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Wrote ${unitPath}:`);
    expect(result.stdout).toContain('failed (exit 1): systemctl --user daemon-reload');
    expect(result.stdout).toContain(`  systemctl --user enable --now ${serviceName(root)}.service`);
    expect(result.stdout).toMatch(/Left out on purpose .*: ANTHROPIC_API_KEY/);
    const unit = await readFile(unitPath, 'utf8');
    expect(result.stdout).toContain(unit);
    expect(unit).toContain(`\nWorkingDirectory=${root}\n`);
    expect(unit).toContain(`\nEnvironment=HOME=${home}\n`);
    expect(unit).toContain(`ExecStart=/bin/sh ${CLI} run --monitor-tags --root ${root}`);
    expect(unit).toContain(`--log-file ${join(root, 'sessions', '.engine', 'daemon.log')}`);
    expect(unit).not.toContain('sk-ant-test-secret');
    expect((await stat(unitPath)).mode & 0o777).toBe(0o600);
  });

  it('writes a unit systemd-analyze verify accepts', async (ctx) => {
    if (spawnSync('systemd-analyze', ['--version']).error) {
      ctx.skip(true, 'systemd-analyze is not installed here: the unit is not verified');
    }
    expect((await service('install')).code).toBe(0);
    const verify = spawnSync('systemd-analyze', ['verify', '--user', unitPath], {
      env,
      encoding: 'utf8',
    });
    expect(verify.status, verify.stderr).toBe(0);
    // verify reports a bad setting on stderr and exits 0 all the same.
    expect(verify.stderr).not.toContain(serviceName(root));
  });

  it('install again leaves an unchanged unit as it is', async () => {
    await service('install');
    const again = await service('install');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`Unchanged ${unitPath}:`);
  });

  it('uninstall removes exactly what install wrote', async () => {
    await mkdir(join(home, '.config', 'systemd', 'user'), { recursive: true });
    await writeFile(join(home, '.config', 'systemd', 'user', 'other.service'), '[Service]\n');
    const before = await filesUnder(home);
    expect((await service('install')).code).toBe(0);
    expect(await filesUnder(home)).toEqual([...before, relative(home, unitPath)].sort());
    const result = await service('uninstall');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Removed ${unitPath}.`);
    expect(await filesUnder(home)).toEqual(before);
  });

  it('neither replaces nor removes a unit file engine did not write', async () => {
    await mkdir(join(unitPath, '..'), { recursive: true });
    await writeFile(unitPath, '[Service]\nExecStart=/bin/true\n');
    const install = await service('install');
    expect(install.code).toBe(1);
    expect(install.stderr).toContain(`${unitPath} exists and was not written by engine`);
    const uninstall = await service('uninstall');
    expect(uninstall.code).toBe(1);
    expect(uninstall.stderr).toContain(`${unitPath} was not written by engine: left as it is`);
    expect(await readFile(unitPath, 'utf8')).toBe('[Service]\nExecStart=/bin/true\n');
  });

  it('status shows the unit and what systemctl --user says; none installed: exit 1', async () => {
    const none = await service('status');
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`no service is installed for ${root} (no ${unitPath})`);
    const missing = await service('uninstall');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`no service is installed for ${root}`);

    await service('install');
    const status = await service('status');
    // systemctl cannot be asked (no bus): the service is not known to run.
    expect(status.code).toBe(1);
    expect(status.stderr).toContain(`the service ${serviceName(root)}.service does not run`);
    expect(status.stdout).toContain(await readFile(unitPath, 'utf8'));
    expect(status.stdout).toContain(
      `$ systemctl --user status --no-pager ${serviceName(root)}.service`,
    );
    expect(status.stdout).toContain('Failed to connect to bus');
  });

  it('a replaced unit is restarted if it runs (try-restart), not left on the old file', async () => {
    expect((await service('install')).code).toBe(0);
    const first = await service('install');
    expect(first.stdout).not.toContain('try-restart');
    env.TZ = 'Europe/Berlin';
    const replaced = await service('install');
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(replaced.stdout).toContain(`Replaced ${unitPath}:`);
    expect(replaced.stdout).toContain(
      `  systemctl --user try-restart ${serviceName(root)}.service`,
    );
  });

  it('names the three subcommands, with examples, in its help', () => {
    const help = execFileSync(process.execPath, [CLI, 'service', '--help'], { encoding: 'utf8' });
    for (const part of ['install', 'uninstall', 'status', 'Examples:'])
      expect(help).toContain(part);
    expect(existsSync(unitPath)).toBe(false);
  });
});

describe('engine service install beside a daemon started from a terminal', () => {
  const h = useDaemonHarness();

  it('refuses, saying engine stop first, and writes no unit', async () => {
    const d = h.start([]);
    await waitForReady(d);
    const result = await runCli(['service', 'install', '--root', h.root], { env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `a daemon of ${h.root} runs outside the service (pid ${d.child.pid})`,
    );
    expect(result.stderr).toContain('engine stop first');
    expect(await filesUnder(home)).toEqual([]);
  });
});
