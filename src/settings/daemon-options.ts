/**
 * The daemon's options: the resolved settings (setting-table.ts), where the daemon runs, and the
 * one choice two settings make together, the agent profile.
 */
import { splitTemplate } from '../dispatch/agent-command.js';
import { EngineError } from '../errors.js';
import type { SettingSource } from './load-settings.js';
import type { SettingName, Settings } from './setting-table.js';

export interface DaemonOptions extends Omit<
  Settings,
  'agentCommand' | 'notify' | 'notifyVia' | 'logFile'
> {
  root: string;
  /** Directories (or files) watched for request files. */
  paths: string[];
  /** The command template of a `custom` agent, split; [] for the Claude profiles. */
  agentTemplate: string[];
}

/** How strongly a setting was given, for the one choice two settings make together. */
const SOURCE_RANK: Record<SettingSource, number> = {
  default: 0,
  'engine.json': 1,
  env: 2,
  flag: 3,
};

/** The daemon's options: every setting as resolved, with the agent profile they choose. */
export function daemonOptions(
  resolved: { settings: Settings; from: Record<SettingName, SettingSource> },
  place: { root: string; paths: string[] },
): DaemonOptions {
  return { ...resolved.settings, ...place, ...agentOptions(resolved.settings, resolved.from) };
}

/**
 * The agent profile: `custom` when a command template (`--agent-cmd`, `ENGINE_AGENT_CMD`,
 * `agentCommand` in engine.json) is given more strongly than `agent` (so `ENGINE_AGENT_CMD` beats
 * the `"agent": "claude"` that `engine init` writes); else `agent`, `claude` by default. A Claude
 * profile given as strongly as a template is refused. It runs `claudeBin`, else `claude`.
 */
function agentOptions(
  settings: Settings,
  from: Record<SettingName, SettingSource>,
): Pick<DaemonOptions, 'agent' | 'agentTemplate' | 'claudeBin'> {
  const template = settings.agentCommand;
  const agent =
    template !== null && SOURCE_RANK[from.agentCommand] > SOURCE_RANK[from.agent]
      ? 'custom'
      : settings.agent;
  if (agent === 'custom') {
    if (template === null) {
      throw new EngineError(
        '--agent custom needs a command: --agent-cmd, ENGINE_AGENT_CMD or agentCommand in directives/engine.json',
      );
    }
    return { agent, agentTemplate: splitTemplate(template), claudeBin: null };
  }
  // A template given less strongly than the Claude profile (in engine.json, say) is not used.
  if (template !== null && SOURCE_RANK[from.agentCommand] === SOURCE_RANK[from.agent]) {
    throw new EngineError(
      `--agent ${agent} and an agent command (--agent-cmd, ENGINE_AGENT_CMD or agentCommand in directives/engine.json) exclude each other: a command runs a custom agent`,
    );
  }
  return { agent, agentTemplate: [], claudeBin: settings.claudeBin };
}
