/** The agent program the daemon would start: on PATH, and the version it reports. */
import { fail, pass, warn, type CheckResult, type DoctorContext } from './doctor-check.js';

export interface AgentProgram {
  result: CheckResult;
  /** `x.y.z` when the program printed one. */
  version: string | null;
}

const ID = 'agent-program';

export async function checkAgentProgram(ctx: DoctorContext): Promise<AgentProgram> {
  const { kind, program } = ctx.agent;
  const claude = kind !== 'custom';
  const setting = claude ? '"claudeBin" (--claude-bin)' : '"agentCommand" (--agent-cmd)';
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
