/** The checks of `engine doctor`, in the order they are shown, over one context. */
import { messageOf } from '../errors.js';
import { daemonOptions } from '../settings/daemon-options.js';
import { readEngineJson, resolveSettings } from '../settings/load-settings.js';
import { defaultSettings } from '../settings/setting-table.js';
import { agentLaunch, checkAgentProgram } from './agent-program.js';
import { checkAuth, checkCleanup } from './claude-account.js';
import { checkOnboarding, checkPermissions, checkTrust, readClaudeFacts } from './claude-checks.js';
import type { CheckResult, DoctorContext, DoctorProbe, TableRead } from './doctor-check.js';
import {
  checkControlSocket,
  checkDaemonLock,
  checkSettings,
  checkTagsMd,
} from './project-checks.js';
import { checkClock, checkInotify, checkNotifySend } from './system-checks.js';
import { checkTmuxEnvironment } from './tmux-env.js';
import { checkClaimsRemote } from './claims-remote.js';
import { checkNode, checkTmux } from './versions.js';

/** The settings and agent the daemon of `root` would start with, or why they cannot be read. */
export async function doctorContext(
  root: string | null,
  table: TableRead | null,
  env: NodeJS.ProcessEnv,
  probe: DoctorProbe,
): Promise<DoctorContext> {
  const place = { root, env, table, probe };
  try {
    const file = root === null ? {} : await readEngineJson(root);
    const resolved = resolveSettings({ flags: {}, env, file });
    const options = daemonOptions(resolved, { root: root ?? '', paths: [] });
    const program =
      options.agent === 'custom'
        ? (options.agentTemplate[0] ?? '')
        : (options.claudeBin ?? 'claude');
    const agent = agentLaunch(options.agent, program, options.agentTemplate);
    return { ...place, settings: resolved.settings, settingsError: null, agent };
  } catch (error) {
    // The other checks still run, on the defaults.
    const settings = defaultSettings();
    return {
      ...place,
      settings,
      settingsError: messageOf(error),
      agent: agentLaunch(settings.agent, 'claude'),
    };
  }
}

export async function runDoctor(ctx: DoctorContext): Promise<CheckResult[]> {
  const agent = await checkAgentProgram(ctx);
  const facts = await readClaudeFacts(ctx, agent.version);
  return [
    checkNode(ctx),
    await checkTmux(ctx),
    agent.result,
    checkOnboarding(ctx, facts),
    checkTrust(ctx, facts),
    checkPermissions(ctx, facts),
    checkAuth(ctx, facts),
    checkCleanup(ctx, facts),
    checkNotifySend(ctx),
    await checkInotify(ctx),
    checkTagsMd(ctx),
    checkSettings(ctx),
    await checkDaemonLock(ctx),
    await checkControlSocket(ctx),
    await checkTmuxEnvironment(ctx),
    await checkClock(ctx),
    await checkClaimsRemote(ctx),
  ];
}
