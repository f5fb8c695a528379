/** `engine doctor`: checks this machine and project before an agent hangs on them (docs/DOCTOR.md). */
import type { CommandModule } from 'yargs';
import { doctorExitCode, type CheckResult, type TableRead } from '../doctor/doctor-check.js';
import { doctorContext, runDoctor } from '../doctor/run-doctor.js';
import { systemDoctorProbe } from '../doctor/system-probe.js';
import { EngineError, messageOf } from '../errors.js';
import { rootOption } from './arguments.js';
import { printJson, printLine } from './output.js';
import { readDispatchTable } from './paths.js';
import { findProjectRoot, projectRoot } from './project-root.js';

export interface DoctorArgs {
  root?: string;
  json: boolean;
}

export const doctorCommand: CommandModule<object, DoctorArgs> = {
  command: 'doctor',
  describe:
    "Checks the set-up engine and its agents need (Node, tmux, Claude Code's first run, trust, permissions and login, notify-send, inotify, TAGS.md, engine.json, stale locks, the clock): PASS, WARN or FAIL, each with its fix; exits 1 on a FAIL",
  builder: (yargs) =>
    yargs
      .option('root', rootOption('Project root to check'))
      .option('json', {
        type: 'boolean',
        default: false,
        describe: 'The checks as a JSON array of {id, status, summary, fix}',
      })
      .example('$0 doctor', 'check this project and machine')
      .example('$0 doctor --root ~/notes', 'check the project at ~/notes')
      .example(
        '$0 doctor --json | jq \'.[] | select(.status != "PASS")\'',
        'only what needs a look',
      ) as never,
  handler: async (args) => {
    await engineDoctor(args);
  },
};

/** The project of --root (an error when it is none), else the one found here, else none. */
async function doctorRoot(given: string | undefined): Promise<string | null> {
  return given !== undefined ? projectRoot(given) : findProjectRoot(process.cwd());
}

async function tableOf(root: string | null): Promise<TableRead | null> {
  if (root === null) return null;
  try {
    return await readDispatchTable(root);
  } catch (error) {
    return { error: messageOf(error) };
  }
}

const WIDTH = Math.max(...['claude-permissions', 'claude-transcripts'].map((id) => id.length));

function lines(results: readonly CheckResult[]): string[] {
  const out: string[] = [];
  for (const r of results) {
    out.push(`${r.status}  ${r.id.padEnd(WIDTH)}  ${r.summary}`);
    if (r.fix !== '') out.push(`${' '.repeat(WIDTH + 8)}fix: ${r.fix}`);
  }
  const count = (status: CheckResult['status']): number =>
    results.filter((r) => r.status === status).length;
  out.push(
    '',
    `${results.length} checks: ${count('PASS')} PASS, ${count('WARN')} WARN, ${count('FAIL')} FAIL, ${count('SKIP')} SKIP`,
  );
  return out;
}

export async function engineDoctor(args: DoctorArgs): Promise<void> {
  const root = await doctorRoot(args.root);
  const ctx = await doctorContext(root, await tableOf(root), process.env, systemDoctorProbe());
  const results = await runDoctor(ctx);
  if (args.json) printJson(results);
  else printLine(lines(results).join('\n'));
  if (doctorExitCode(results) !== 0) {
    const failed = results.filter((r) => r.status === 'FAIL').map((r) => r.id);
    throw new EngineError(`${failed.length} check(s) FAIL: ${failed.join(', ')}`);
  }
}
