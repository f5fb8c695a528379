/**
 * `engine service install|uninstall|status [--root DIR]`: the root's daemon as a user service
 * (systemd --user on Linux, a launchd agent on macOS). docs/SERVICE.md.
 */
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { EngineError } from '../errors.js';
import type { CommandRun, ServiceFile } from '../service/service-files.js';
import { rootOption } from './arguments.js';
import { printLine } from './output.js';
import { ENGINE_MAIN } from './paths.js';
import { projectRoot } from './project-root.js';

interface Args {
  root?: string;
}

async function place(args: Args): Promise<{ root: string; file: ServiceFile }> {
  if (process.platform !== 'linux' && process.platform !== 'darwin')
    throw new EngineError(
      `engine service runs on Linux (systemd) and macOS (launchd), not ${process.platform}`,
    );
  const root = await projectRoot(args.root);
  const { serviceFile } = await import('../service/service-files.js');
  const file = serviceFile(root, {
    manager: process.platform === 'darwin' ? 'launchd' : 'systemd',
    home: homedir(),
    configHome: process.env.XDG_CONFIG_HOME || undefined,
    uid: process.getuid?.() ?? 0,
  });
  return { root, file };
}

/**
 * The entry the service runs: the path this engine was started by (the global bin link, which
 * an upgrade keeps), when it leads to this engine; else this engine's own main.cjs.
 */
function engineEntry(): string {
  const invoked = process.argv[1];
  try {
    if (invoked && realpathSync(invoked) === realpathSync(ENGINE_MAIN)) return invoked;
  } catch {
    // not a file: this engine's own main.cjs below
  }
  return ENGINE_MAIN;
}

function printRuns(runs: CommandRun[]): boolean {
  for (const run of runs) {
    const line = run.command.join(' ');
    if (run.code === null) printLine(`  not run: ${line}`);
    else if (run.code === 0) printLine(`  ran: ${line}`);
    else printLine(`  failed (exit ${run.code}): ${line}: ${run.output.split('\n')[0]}`);
  }
  return runs.every((run) => run.code === 0);
}

function printToRun(file: ServiceFile, commands: string[][], what: string): void {
  const manager = file.manager === 'systemd' ? 'systemctl --user' : 'launchctl';
  printLine(`${manager} is not usable here: ${what}, where it is, with:`);
  for (const command of commands) printLine(`  ${command.join(' ')}`);
}

const installCommand: CommandModule<object, Args> = {
  command: 'install',
  describe:
    "Write this root's service (systemd user unit or launchd agent), then enable and start it",
  builder: (yargs) =>
    rootOptionOf(yargs, 'Project root whose daemon the service runs')
      .example('$0 service install', 'the service of the project around the current directory')
      .example('$0 service install --root ~/src/app', 'the service of another project'),
  handler: async (args) => {
    // launchd could run it, but the daemon itself needs Linux (procfs: process identity, claims).
    if (process.platform === 'darwin')
      throw new EngineError(
        'engine service install runs on Linux only: the daemon needs Linux procfs, and macOS has none',
      );
    const { root, file } = await place(args);
    const { daemonOutsideUnit } = await import('../service/daemon-outside-unit.js');
    const running = await daemonOutsideUnit(root, file.name);
    if (running !== null)
      throw new EngineError(
        `a daemon of ${root} runs outside the service (pid ${running.pid}): the service's daemon would fail on its lock; engine stop first, then install`,
      );
    const { captureEnvironment } = await import('../service/service-unit.js');
    const { serviceContent, writeServiceFile, runCommands } =
      await import('../service/service-files.js');
    const logFile = join(root, 'sessions', '.engine', 'daemon.log');
    const spec = { root, entry: engineEntry(), logFile, ...captureEnvironment(process.env) };
    const content = serviceContent(file, spec);
    const outcome = await writeServiceFile(file, content);
    printLine(
      `${outcome === 'unchanged' ? 'Unchanged' : outcome === 'written' ? 'Wrote' : 'Replaced'} ${file.path}:\n`,
    );
    printLine(content);
    printLine(`Environment captured: ${Object.keys(spec.environment).join(' ') || 'none'}.`);
    if (spec.leftOut.length > 0)
      printLine(
        `Left out on purpose (secrets are never written into the file): ${spec.leftOut.join(' ')}; see docs/SERVICE.md.`,
      );
    printLine(`The daemon's log: ${logFile}`);
    // enable --now starts a stopped service but leaves a running one on the old file.
    const commands = outcome === 'replaced' ? [...file.install, file.restart] : file.install;
    if (printRuns(await runCommands(commands, process.env)))
      printLine(`The service ${file.name} runs the daemon of ${root}.`);
    else printToRun(file, commands, 'the file is written; enable and (re)start it');
  },
};

const uninstallCommand: CommandModule<object, Args> = {
  command: 'uninstall',
  describe: "Stop and disable this root's service and remove its file (agents keep running)",
  builder: (yargs) =>
    rootOptionOf(yargs, 'Project root whose service to remove')
      .example('$0 service uninstall', 'stop and remove the service of the project here')
      .example('$0 service uninstall --root ~/src/app', 'the same for another project'),
  handler: async (args) => {
    const { root, file } = await place(args);
    const { readServiceFile, removeServiceFile, runCommands } =
      await import('../service/service-files.js');
    if ((await readServiceFile(file)) === null)
      throw new EngineError(`no service is installed for ${root} (no ${file.path})`);
    const [stop, ...after] = file.uninstall;
    const stopped = printRuns(await runCommands([stop!], process.env));
    await removeServiceFile(file);
    printLine(`Removed ${file.path}.`);
    if (!stopped || !printRuns(await runCommands(after, process.env)))
      printToRun(file, file.uninstall, 'if the service was enabled, stop and disable it');
  },
};

const statusCommand: CommandModule<object, Args> = {
  command: 'status',
  describe: "Show this root's service file and what the service manager says of it",
  builder: (yargs) =>
    rootOptionOf(yargs, 'Project root whose service to show')
      .example('$0 service status', 'the unit of the project here and whether it runs')
      .example('$0 service status --root ~/src/app', 'the same for another project'),
  handler: async (args) => {
    const { root, file } = await place(args);
    const { readServiceFile, runOne } = await import('../service/service-files.js');
    const content = await readServiceFile(file);
    if (content === null)
      throw new EngineError(
        `no service is installed for ${root} (no ${file.path}); engine service install writes one`,
      );
    printLine(`${file.path}:\n`);
    printLine(content);
    const run = await runOne(file.status, process.env);
    printLine(`$ ${file.status.join(' ')}  (exit ${run.code})`);
    printLine(run.output);
    // systemctl status exits non-zero for inactive, failed, unknown, and when it cannot be asked.
    if (run.code !== 0)
      throw new EngineError(
        `the service ${file.name} does not run, or ${file.status[0]} cannot say (exit ${run.code})`,
      );
  },
};

function rootOptionOf(yargs: Argv, describe: string): Argv<Args> {
  return yargs.option('root', rootOption(describe)) as never;
}

export const serviceCommand: CommandModule<object, object> = {
  command: 'service <command>',
  describe: "Run this root's daemon as a user service: systemd --user (Linux) or launchd (macOS)",
  builder: (yargs) =>
    yargs
      .command(installCommand as never)
      .command(uninstallCommand as never)
      .command(statusCommand as never)
      .example('$0 service install', 'write, enable and start the service of the project here')
      .example('$0 service status --root ~/src/app', "show another project's service")
      .example('$0 service uninstall', 'stop it and remove its unit file; agents keep running')
      .demandCommand(1, 'Name one: install, uninstall or status') as never,
  handler: () => undefined,
};
