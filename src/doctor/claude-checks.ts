/**
 * What stops a Claude Code agent that nobody watches: a first run not done, a folder not trusted,
 * a Bash call that waits for a person, no key or login, transcripts deleted before a retry needs
 * them. Pure: each reads the facts gathered once (readClaudeFacts).
 */
import { dirname } from 'node:path';
import {
  claudePaths,
  mergedSettings,
  readJsonObject,
  type ClaudePaths,
  type JsonRead,
  type MergedSettings,
} from './claude-config.js';
import {
  compareVersions,
  fail,
  pass,
  skip,
  warn,
  type CheckResult,
  type DoctorContext,
} from './doctor-check.js';

export interface ClaudeFacts {
  paths: ClaudePaths;
  version: string | null;
  global: JsonRead;
  settings: MergedSettings;
  credentials: JsonRead;
}

/** From this version on, interactive Claude Code starts in auto mode unless told otherwise. */
export const AUTO_MODE_DEFAULT_FROM = '2.1.283';

export async function readClaudeFacts(
  ctx: DoctorContext,
  version: string | null,
): Promise<ClaudeFacts> {
  const paths = claudePaths(ctx.probe.home, ctx.env, ctx.root);
  return {
    paths,
    version,
    global: await readJsonObject(ctx, paths.globalConfig),
    settings: await mergedSettings(ctx, paths.settings),
    credentials: await readJsonObject(ctx, paths.credentials),
  };
}

const interactive = (ctx: DoctorContext): boolean => ctx.agent.kind === 'claude';
const notClaude = (id: string): CheckResult => skip(id, 'a custom agent: Claude Code is not used');

export function checkOnboarding(ctx: DoctorContext, facts: ClaudeFacts): CheckResult {
  const id = 'claude-first-run';
  if (ctx.agent.kind === 'custom') return notClaude(id);
  if (!interactive(ctx)) return skip(id, 'claude -p shows no first-run screens');
  const fix = `run ${ctx.agent.program} once in a terminal and finish its first-run screens`;
  if ('error' in facts.global)
    return fail(id, `${facts.global.path} is unreadable: ${facts.global.error}`, fix);
  if (facts.global.value === null)
    return fail(id, `no ${facts.paths.globalConfig}: Claude Code never ran as this user`, fix);
  if (facts.global.value.hasCompletedOnboarding !== true)
    return fail(
      id,
      `first run not finished (${facts.paths.globalConfig} hasCompletedOnboarding is not true): an agent would wait on it`,
      fix,
    );
  return pass(id, `first run done (${facts.paths.globalConfig})`);
}

/** The trusted folder at or above `root` (Claude Code takes a parent's trust), or null. */
function trustedAt(
  projects: Record<string, { hasTrustDialogAccepted?: unknown }>,
  root: string,
): string | null {
  for (let dir = root; ; dir = dirname(dir)) {
    if (projects[dir]?.hasTrustDialogAccepted === true) return dir;
    if (dirname(dir) === dir) return null;
  }
}

export function checkTrust(ctx: DoctorContext, facts: ClaudeFacts): CheckResult {
  const id = 'claude-trust';
  if (ctx.agent.kind === 'custom') return notClaude(id);
  if (!interactive(ctx)) return skip(id, 'claude -p does not ask to trust a folder');
  if (ctx.root === null) return skip(id, 'no engine project here');
  const fix = `cd ${ctx.root} && ${ctx.agent.program}, and answer "Yes, I trust this folder"`;
  const global = 'value' in facts.global ? facts.global.value : null;
  const projects = (global?.projects ?? {}) as Record<string, { hasTrustDialogAccepted?: unknown }>;
  const at = trustedAt(projects, ctx.root);
  if (at === null)
    return fail(
      id,
      `${ctx.root} is not trusted by Claude Code: each agent would wait on the trust question (default No)`,
      fix,
    );
  return pass(
    id,
    at === ctx.root ? `${ctx.root} is trusted` : `${ctx.root} is trusted through ${at}`,
  );
}

const ALL_BASH = new Set(['Bash', 'Bash(*)', 'Bash(:*)']);

/** The permission mode interactive Claude Code starts in, as its settings and version decide. */
function startMode(facts: ClaudeFacts): string {
  if (
    facts.settings.defaultMode !== null &&
    !(facts.settings.defaultMode === 'auto' && facts.settings.autoModeDisabled)
  )
    return facts.settings.defaultMode;
  const autoByDefault =
    facts.version !== null && compareVersions(facts.version, AUTO_MODE_DEFAULT_FROM) >= 0;
  return autoByDefault && !facts.settings.autoModeDisabled ? 'auto' : 'default';
}

export function checkPermissions(ctx: DoctorContext, facts: ClaudeFacts): CheckResult {
  const id = 'claude-permissions';
  if (ctx.agent.kind === 'custom') return notClaude(id);
  const where = ctx.root === null ? facts.paths.settings[0] : `${ctx.root}/.claude/settings.json`;
  if (facts.settings.deny.some((rule) => ALL_BASH.has(rule)))
    return fail(
      id,
      'permissions.deny holds Bash: an agent cannot run engine tag swap to mark its item done',
      `remove "Bash" from permissions.deny (${facts.settings.read.join(', ')})`,
    );
  if (!interactive(ctx))
    return pass(id, 'claude -p is started with --allowedTools Bash Edit Write Read');
  const allowFix = `add "Bash" to permissions.allow in ${where}, or run unattended with --agent claude-print`;
  const mode = startMode(facts);
  if (mode === 'bypassPermissions')
    return ctx.probe.uid === 0
      ? fail(
          id,
          'defaultMode bypassPermissions: Claude Code refuses it as root and will not start',
          `set permissions.defaultMode to "default" and ${allowFix}`,
        )
      : pass(id, 'defaultMode bypassPermissions: no tool call asks');
  if (mode === 'auto') {
    if ((ctx.env.ANTHROPIC_BASE_URL ?? '') !== '')
      return warn(
        id,
        'auto mode through ANTHROPIC_BASE_URL: when its safety check cannot pass the gateway, every Bash call waits for a person',
        `set "disableAutoMode": "disable" in ${facts.paths.settings[0]} and ${allowFix}`,
      );
    return pass(
      id,
      'auto mode: its classifier approves Bash calls (one it finds risky still asks)',
    );
  }
  if (facts.settings.allow.some((rule) => ALL_BASH.has(rule)))
    return pass(id, `${mode} mode, Bash allowed by permissions.allow`);
  const some = facts.settings.allow.filter((rule) => rule.startsWith('Bash(')).length;
  const shown = some > 0 ? `only ${some} Bash rule(s) allowed` : 'Bash is not allowed';
  if (mode === 'dontAsk')
    return fail(id, `dontAsk mode and ${shown}: other Bash calls are denied`, allowFix);
  return warn(
    id,
    `${mode} mode and ${shown}: an agent's other Bash calls wait for a person`,
    allowFix,
  );
}
