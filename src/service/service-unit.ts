/**
 * The service that runs a root's daemon, as text: a systemd user unit (Linux) or a launchd agent
 * (macOS). Pure: what goes in is given (the root, the engine entry, the environment), so the
 * content is tested as it is written.
 */
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { EngineError } from '../errors.js';

export interface ServiceSpec {
  root: string;
  /** The `engine` entry the service runs (the bin link as invoked; node found on PATH). */
  entry: string;
  /** The daemon's --log-file. */
  logFile: string;
  /** What the service's environment holds, captured at install. */
  environment: Record<string, string>;
  /** Variables of the installing shell deliberately not written. */
  leftOut: string[];
}

/** The header line that marks a file as engine's: uninstall removes no other. */
export const WRITTEN_BY = 'Written by `engine service install`';

/** `engine-<dir name>-<hash of the root>`: readable, and one per root. */
export function serviceName(root: string): string {
  const name =
    basename(root)
      .toLowerCase()
      .replace(/[^a-z0-9_.-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'root';
  const hash = createHash('sha256').update(root).digest('hex').slice(0, 8);
  return `engine-${name}-${hash}`;
}

/** Variables the agent needs that the service manager does not give, or gives otherwise. */
const CAPTURED = [
  /^PATH$/,
  /^HOME$/,
  /^SHELL$/,
  /^USER$/,
  /^LANG$/,
  /^LC_[A-Z]+$/,
  /^TZ$/,
  // The tmux server's socket directory: `engine attach` from a shell must find the same server.
  /^TMUX_TMPDIR$/,
  /^XDG_CONFIG_HOME$/,
  // engine's state (git claims' checkouts): the service must use the folder doctor checked.
  /^XDG_STATE_HOME$/,
];

/**
 * Claude Code's configuration and provider choice: only names known to carry no secret. Any other
 * ANTHROPIC_* or CLAUDE_* (ANTHROPIC_CUSTOM_HEADERS holds an Authorization header) is left out.
 */
const CLAUDE_ALLOWED = new Set([
  'CLAUDE_CONFIG_DIR',
  'ANTHROPIC_BASE_URL',
  'ANTHROPIC_BEDROCK_BASE_URL',
  'ANTHROPIC_VERTEX_BASE_URL',
  'ANTHROPIC_VERTEX_PROJECT_ID',
  'ANTHROPIC_MODEL',
  'ANTHROPIC_SMALL_FAST_MODEL',
  'ANTHROPIC_DEFAULT_OPUS_MODEL',
  'ANTHROPIC_DEFAULT_SONNET_MODEL',
  'ANTHROPIC_DEFAULT_HAIKU_MODEL',
  'CLAUDE_CODE_USE_BEDROCK',
  'CLAUDE_CODE_USE_VERTEX',
  'CLAUDE_CODE_SUBAGENT_MODEL',
  'CLAUDE_CODE_MAX_OUTPUT_TOKENS',
  'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC',
]);

/** A unit file or plist is plain text in the home directory: no secret is ever written there. */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|HEADER/;
/** A value that looks like a credential whatever its name: a bearer token, a key, a URL's user:pw@. */
const SECRET_VALUE = /Bearer |sk-ant-|:\/\/[^/]*@/i;

/** The installing shell's variables the service keeps, and those it leaves out on purpose. */
export function captureEnvironment(env: NodeJS.ProcessEnv): {
  environment: Record<string, string>;
  leftOut: string[];
} {
  const environment: Record<string, string> = {};
  const leftOut: string[] = [];
  for (const name of Object.keys(env).sort()) {
    const value = env[name];
    const claude = /^(ANTHROPIC|CLAUDE)_/.test(name);
    if (value === undefined || value === '') continue;
    if (!claude && !CAPTURED.some((re) => re.test(name))) continue;
    // An allowed Claude name is known by its meaning (MAX_OUTPUT_TOKENS is a number), others by
    // their name's words; every value is checked.
    const secret =
      (claude ? !CLAUDE_ALLOWED.has(name) : SECRET_NAME.test(name)) ||
      SECRET_VALUE.test(value) ||
      /[\n\r\0]/.test(value);
    if (secret) leftOut.push(name);
    else environment[name] = value;
  }
  return { environment, leftOut };
}

/**
 * The daemon's command line: the entry (main.cjs, whose first lines are a sh launcher) run by sh,
 * as a shell runs the `engine` command: the launcher runs the node on the service's PATH, with the
 * daemon's MALLOC_ARENA_MAX (scripts/bundle-lean.mjs), and needs no mode bit on the entry.
 */
export function daemonArgv(spec: ServiceSpec): string[] {
  const args = ['run', '--monitor-tags', '--root', spec.root, '--log-file', spec.logFile];
  return ['/bin/sh', spec.entry, ...args];
}

function refuseLineBreaks(spec: ServiceSpec): void {
  for (const value of [spec.root, spec.entry, spec.logFile])
    if (/[\n\r\0]/.test(value))
      throw new EngineError(
        `a service cannot name a path with a line break: ${JSON.stringify(value)}`,
      );
}

/**
 * One systemd word, quoted where needed: `%` starts a specifier everywhere, and in ExecStart (not in
 * Environment) `$` starts a variable; each is doubled to stand for itself.
 */
function systemdWord(value: string, where: 'exec' | 'environment'): string {
  if (/^[A-Za-z0-9_./:=@+,-]+$/.test(value)) return value;
  let escaped = value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%');
  if (where === 'exec') escaped = escaped.replace(/\$/g, '$$$$');
  return `"${escaped}"`;
}

/** The systemd user unit. KillMode=process: stopping the unit ends the daemon, never its agents. */
export function systemdUnit(spec: ServiceSpec): string {
  refuseLineBreaks(spec);
  const env = Object.entries(spec.environment).map(
    ([name, value]) => `Environment=${systemdWord(`${name}=${value}`, 'environment')}`,
  );
  return [
    `# ${WRITTEN_BY} for ${spec.root}; \`engine service uninstall\` removes it.`,
    `# Environment captured at install: ${Object.keys(spec.environment).join(' ') || 'none'}.`,
    `# Left out on purpose (secrets are never written here): ${spec.leftOut.join(' ') || 'none'}.`,
    '# Your own changes go in a drop-in (systemctl --user edit), which install never overwrites.',
    '[Unit]',
    `Description=engine daemon for ${spec.root.replace(/%/g, '%%')}`,
    '',
    '[Service]',
    'Type=simple',
    `WorkingDirectory=${spec.root.replace(/%/g, '%%')}`,
    ...env,
    `ExecStart=${daemonArgv(spec)
      .map((word) => systemdWord(word, 'exec'))
      .join(' ')}`,
    // The agents run in a tmux server this daemon may have started, inside the unit's cgroup.
    'KillMode=process',
    'Restart=on-failure',
    'RestartSec=10',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
}

function xml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

/** The launchd label of the root's agent. */
export function launchdLabel(root: string): string {
  return `mdtags.${serviceName(root)}`;
}

/**
 * The launchd agent. AbandonProcessGroup: stopping the job ends the daemon, never its agents (as
 * KillMode=process); KeepAlive on an unsuccessful exit only (as Restart=on-failure).
 */
export function launchdPlist(spec: ServiceSpec): string {
  refuseLineBreaks(spec);
  const strings = (values: string[]) => values.map((v) => `    <string>${xml(v)}</string>`);
  const env = Object.entries(spec.environment).flatMap(([name, value]) => [
    `    <key>${xml(name)}</key>`,
    `    <string>${xml(value)}</string>`,
  ]);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    `<!-- ${WRITTEN_BY} for ${xml(spec.root).replace(/--/g, '- -')}; \`engine service uninstall\` removes it. -->`,
    `<!-- Left out on purpose (secrets are never written here): ${spec.leftOut.join(' ') || 'none'}. -->`,
    '<plist version="1.0">',
    '<dict>',
    '  <key>Label</key>',
    `  <string>${xml(launchdLabel(spec.root))}</string>`,
    '  <key>ProgramArguments</key>',
    '  <array>',
    ...strings(daemonArgv(spec)),
    '  </array>',
    '  <key>WorkingDirectory</key>',
    `  <string>${xml(spec.root)}</string>`,
    '  <key>EnvironmentVariables</key>',
    '  <dict>',
    ...env,
    '  </dict>',
    '  <key>RunAtLoad</key>',
    '  <true/>',
    '  <key>KeepAlive</key>',
    '  <dict>',
    '    <key>SuccessfulExit</key>',
    '    <false/>',
    '  </dict>',
    // Errors before the log file opens (a bad engine.json): launchd has no journal to keep them.
    '  <key>StandardErrorPath</key>',
    `  <string>${xml(`${spec.logFile}.stderr`)}</string>`,
    '  <key>AbandonProcessGroup</key>',
    '  <true/>',
    '</dict>',
    '</plist>',
    '',
  ].join('\n');
}
