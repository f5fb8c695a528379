/** The agent program the daemon would start: on PATH, and the version it reports. */
import { basename } from 'node:path';
import { PRINT_ALLOWED_TOOLS, type AgentKind } from '../agents/agent-profile.js';
import {
  fail,
  pass,
  warn,
  type AgentLaunch,
  type CheckResult,
  type DoctorContext,
} from './doctor-check.js';

/** The agent of a profile: its program and, for Claude Code, the arguments it is started with. */
export function agentLaunch(
  kind: AgentKind,
  program: string,
  template: string[] = [],
): AgentLaunch {
  if (kind === 'claude') return { kind, program, claude: { print: false, args: [] } };
  if (kind === 'claude-print')
    return {
      kind,
      program,
      claude: { print: true, args: ['-p', '--allowedTools', ...PRINT_ALLOWED_TOOLS] },
    };
  const args = template.slice(1);
  const isClaude = basename(program) === 'claude';
  return {
    kind,
    program,
    claude: isClaude ? { print: args.includes('-p') || args.includes('--print'), args } : null,
  };
}

export interface AgentProgram {
  result: CheckResult;
  /** `x.y.z` when the program printed one. */
  version: string | null;
}

const ID = 'agent-program';

export async function checkAgentProgram(ctx: DoctorContext): Promise<AgentProgram> {
  const { kind, program } = ctx.agent;
  const claude = ctx.agent.claude !== null;
  const setting = kind !== 'custom' ? '"claudeBin" (--claude-bin)' : '"agentCommand" (--agent-cmd)';
  const found = ctx.probe.findProgram(program, ctx.env.PATH ?? '');
  if (found === null) {
    const fix = claude
      ? `install Claude Code (npm install -g @anthropic-ai/claude-code) or set ${setting} in directives/engine.json`
      : `put ${program} on PATH or fix ${setting} in directives/engine.json`;
    return {
      result: fail(ID, `${program} (the ${kind} agent) is not on PATH`, fix),
      version: null,
    };
  }
  if (!claude)
    return { result: pass(ID, `${program} found at ${found} (custom agent)`), version: null };
  const out = await ctx.probe.run(found, ['--version'], ctx.env);
  if (!out.ok)
    return {
      result: fail(
        ID,
        `${found} --version failed: ${out.reason}`,
        `run ${found} --version and fix what it says, or reinstall Claude Code`,
      ),
      version: null,
    };
  const version = /(\d+\.\d+\.\d+)/.exec(out.stdout)?.[1] ?? null;
  if (version === null)
    return {
      result: warn(
        ID,
        `${found} --version printed no version ("${out.stdout.trim().slice(0, 80)}")`,
        `check that ${setting} names Claude Code`,
      ),
      version: null,
    };
  return { result: pass(ID, `Claude Code ${version} at ${found}`), version };
}
