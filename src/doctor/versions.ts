/** The Node and tmux versions engine needs. */
import {
  compareVersions,
  fail,
  pass,
  skip,
  warn,
  type CheckResult,
  type DoctorContext,
} from './doctor-check.js';

/**
 * tmux below this lacks `respawn-pane -c` (2.6), which the runner starts every agent with; below
 * TMUX_TESTED it is untested: the runner's behaviour was measured with 3.3a (docs/TECH-NOTES).
 */
export const TMUX_NEEDED = '2.6';
export const TMUX_TESTED = '3.3';

export function checkNode(ctx: DoctorContext): CheckResult {
  const { nodeVersion, nodeRange } = ctx.probe;
  const least = /^>=\s*(\d+(?:\.\d+)*)$/.exec(nodeRange.trim())?.[1];
  if (least === undefined)
    return warn(
      'node',
      `Node ${nodeVersion}; engines.node "${nodeRange}" is not read here`,
      'check package.json engines.node',
    );
  if (compareVersions(nodeVersion, least) < 0) {
    return fail(
      'node',
      `Node ${nodeVersion} is older than the ${least} engine needs`,
      `install Node ${least} or newer (e.g. nvm install 22)`,
    );
  }
  return pass('node', `Node ${nodeVersion} (needs ${least} or newer)`);
}

export async function checkTmux(ctx: DoctorContext): Promise<CheckResult> {
  if (ctx.settings.runner !== 'tmux')
    return skip('tmux', `runner is ${ctx.settings.runner}: tmux is not used`);
  const fixInstall = `install tmux ${TMUX_TESTED} or newer (e.g. apt-get install tmux), or set "runner": "pty" in directives/engine.json`;
  if (ctx.probe.findProgram('tmux', ctx.env.PATH ?? '') === null)
    return fail('tmux', 'tmux is not on PATH: agents run in tmux windows', fixInstall);
  const out = await ctx.probe.run('tmux', ['-V'], ctx.env);
  const version = out.ok ? /(\d+\.\d+[a-z]?)/.exec(out.stdout)?.[1] : undefined;
  if (version === undefined) {
    const why = out.ok ? `printed "${out.stdout.trim()}"` : out.reason;
    return fail('tmux', `tmux -V gave no version: ${why}`, fixInstall);
  }
  if (compareVersions(version, TMUX_NEEDED) < 0)
    return fail(
      'tmux',
      `tmux ${version} is older than ${TMUX_NEEDED} (respawn-pane -c)`,
      fixInstall,
    );
  if (compareVersions(version, TMUX_TESTED) < 0)
    return warn('tmux', `tmux ${version}: engine is tested with ${TMUX_TESTED}a`, fixInstall);
  return pass('tmux', `tmux ${version}`);
}
