/**
 * What stops a Claude Code agent that nobody watches: a first run not done, a folder not trusted,
 * a Bash call that waits for a person (the key or login and the transcripts kept: claude-account).
 * Pure: each reads the facts gathered once (readClaudeFacts).
 */
import { dirname } from 'node:path';
import { checkoutsDir } from '../daemon/git-place.js';
import { shellQuote } from '../runners/runner.js';
import { serviceFile } from '../service/service-files.js';
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
  /** The root's installed systemd unit (engine service install), or null. */
  serviceUnit: string | null;
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
    serviceUnit: await installedUnit(ctx),
  };
}

async function installedUnit(ctx: DoctorContext): Promise<string | null> {
  if (ctx.root === null || ctx.probe.platform !== 'linux') return null;
  const file = serviceFile(ctx.root, {
    manager: 'systemd',
    home: ctx.probe.home,
    configHome: ctx.env.XDG_CONFIG_HOME || undefined,
    uid: ctx.probe.uid,
  });
  // Unreadable is still there: only a missing file means no unit.
  const text = await ctx.probe.readText(file.path).catch(() => '');
  return text === null ? null : file.path;
}

const interactive = (ctx: DoctorContext): boolean => ctx.agent.claude?.print === false;
const notClaude = (id: string): CheckResult =>
  skip(id, 'a custom agent that is not claude: Claude Code is not used');

export function checkOnboarding(ctx: DoctorContext, facts: ClaudeFacts): CheckResult {
  const id = 'claude-first-run';
  if (ctx.agent.claude === null) return notClaude(id);
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

/**
 * The folders agents run in must be trusted: the root (its `.engine-worktrees/` with it) and,
 * with git claims, the checkouts in engine's state directory, where their worktrees are made.
 */
export function checkTrust(ctx: DoctorContext, facts: ClaudeFacts): CheckResult {
  const id = 'claude-trust';
  if (ctx.agent.claude === null) return notClaude(id);
  if (!interactive(ctx)) return skip(id, 'claude -p does not ask to trust a folder');
  if (ctx.root === null) return skip(id, 'no engine project here');
  const global = 'value' in facts.global ? facts.global.value : null;
  const projects = (global?.projects ?? {}) as Record<string, { hasTrustDialogAccepted?: unknown }>;
  const folders = [ctx.root, ...(ctx.settings.claims === 'git' ? [checkoutsDir(ctx.env)] : [])];
  const trust = folders.map((folder) => ({ folder, at: trustedAt(projects, folder) }));
  const untrusted = trust.flatMap(({ folder, at }) => (at === null ? [folder] : []));
  if (untrusted.length > 0) {
    const answer = `${ctx.agent.program}, and answer "Yes, I trust this folder"`;
    const fix = untrusted
      .map((folder) => {
        const word = /^[\w./@%+=:,-]+$/.test(folder) ? folder : shellQuote(folder);
        return folder === ctx.root
          ? `cd ${word} && ${answer}`
          : `mkdir -p ${word} && cd ${word} && ${answer}`;
      })
      .join('; then ');
    const where = untrusted.map((folder) =>
      folder === ctx.root ? folder : `${folder} (git claims: agents' worktrees)`,
    );
    return fail(
      id,
      `${where.join(' and ')} ${untrusted.length > 1 ? 'are' : 'is'} not trusted by Claude Code: each agent would wait on the trust question (default No)`,
      fix,
    );
  }
  return pass(
    id,
    trust
      .map(({ folder, at }) =>
        at === folder ? `${folder} is trusted` : `${folder} is trusted through ${at}`,
      )
      .join('; '),
  );
}

const ALL_BASH = new Set(['Bash', 'Bash(*)', 'Bash(:*)']);

/** The words after a flag in Claude Code's arguments, up to the next option; each may hold a comma list. */
function flagValues(args: string[], names: string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (!names.includes(args[i] as string)) continue;
    for (let j = i + 1; j < args.length && !(args[j] as string).startsWith('-'); j++)
      values.push(...(args[j] as string).split(/[ ,]+/).filter(Boolean));
  }
  return values;
}

/** The permission mode Claude Code starts in: its flags, else its settings (and, interactive, its version). */
function startMode(args: string[], print: boolean, facts: ClaudeFacts): string {
  if (args.includes('--dangerously-skip-permissions')) return 'bypassPermissions';
  const flag = flagValues(args, ['--permission-mode']).at(-1);
  if (flag !== undefined) return flag;
  const { defaultMode, autoModeDisabled } = facts.settings;
  if (defaultMode !== null && !(defaultMode === 'auto' && autoModeDisabled)) return defaultMode;
  if (print) return 'default';
  const autoByDefault =
    facts.version !== null && compareVersions(facts.version, AUTO_MODE_DEFAULT_FROM) >= 0;
  return autoByDefault && !autoModeDisabled ? 'auto' : 'default';
}

/** The command an agent runs to mark its item done, as a deny rule would see it. */
const TAG_SWAP = "engine tag swap sessions/a.md '#working-fix' '#done-fix'";

/**
 * Whether a deny rule blocks TAG_SWAP: all of Bash, a prefix rule `Bash(engine:*)` or
 * `Bash(engine tag swap:*)`, or a pattern whose `*` wildcards match it.
 */
function blocksTagSwap(rule: string): boolean {
  if (ALL_BASH.has(rule)) return true;
  const pattern = /^Bash\((.*)\)$/s.exec(rule)?.[1]?.trim();
  if (pattern === undefined) return false;
  if (pattern.endsWith(':*')) return TAG_SWAP.startsWith(pattern.slice(0, -2));
  const glob = pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${glob.join('.*')}$`, 's').test(TAG_SWAP);
}

export function checkPermissions(ctx: DoctorContext, facts: ClaudeFacts): CheckResult {
  const id = 'claude-permissions';
  const claude = ctx.agent.claude;
  if (claude === null) return notClaude(id);
  const broken = facts.settings.broken[0];
  if (broken !== undefined)
    return warn(
      id,
      `Claude Code's settings cannot be read: ${broken}`,
      'fix that file (it must be a JSON object)',
    );
  const denied = facts.settings.deny.find(blocksTagSwap);
  if (denied !== undefined)
    return fail(
      id,
      `permissions.deny holds ${denied}: an agent cannot run engine tag swap to mark its item done`,
      `remove ${JSON.stringify(denied)} from permissions.deny (${facts.settings.read.join(', ')})`,
    );
  const where = ctx.root === null ? facts.paths.settings[0] : `${ctx.root}/.claude/settings.json`;
  const allowFix = `add "Bash" to permissions.allow in ${where}${claude.print ? '' : ', or run unattended with --agent claude-print'}`;
  const mode = startMode(claude.args, claude.print, facts);
  if (mode === 'bypassPermissions')
    return ctx.probe.uid === 0
      ? fail(
          id,
          'bypassPermissions: Claude Code refuses it as root and will not start',
          `drop it and ${allowFix}`,
        )
      : pass(id, 'bypassPermissions: no tool call asks');
  if (flagValues(claude.args, ['--allowedTools', '--allowed-tools']).some((t) => ALL_BASH.has(t)))
    return pass(
      id,
      `Claude Code is started with --allowedTools ${flagValues(claude.args, ['--allowedTools', '--allowed-tools']).join(' ')}`,
    );
  if (mode === 'auto' && !claude.print) return autoModeResult(ctx, facts, allowFix);
  if (facts.settings.allow.some((rule) => ALL_BASH.has(rule)))
    return pass(id, `${mode} mode, Bash allowed by permissions.allow`);
  const some = facts.settings.allow.filter((rule) => rule.startsWith('Bash(')).length;
  const shown = some > 0 ? `only ${some} Bash rule(s) allowed` : 'Bash is not allowed';
  if (claude.print || mode === 'dontAsk')
    return fail(
      id,
      `${claude.print ? 'claude -p' : 'dontAsk mode'} and ${shown}: other Bash calls are denied, nobody is asked`,
      allowFix,
    );
  return warn(
    id,
    `${mode} mode and ${shown}: an agent's other Bash calls wait for a person`,
    allowFix,
  );
}

function autoModeResult(ctx: DoctorContext, facts: ClaudeFacts, allowFix: string): CheckResult {
  const id = 'claude-permissions';
  if ((ctx.env.ANTHROPIC_BASE_URL ?? '') !== '')
    return warn(
      id,
      'auto mode through ANTHROPIC_BASE_URL: when its safety check cannot pass the gateway, every Bash call waits for a person',
      `set "disableAutoMode": "disable" in ${facts.paths.settings[0]} and ${allowFix}`,
    );
  return pass(id, 'auto mode: its classifier approves Bash calls (one it finds risky still asks)');
}
