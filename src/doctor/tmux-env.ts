/**
 * A tmux server keeps the environment of its first start. engine hands each agent the daemon's
 * own environment (runners/env-file.ts), so its agents are not affected; a window opened by hand
 * on that server (to run or resume an agent yourself) gets the server's, which may be stale.
 */
import { pass, skip, warn, type CheckResult, type DoctorContext } from './doctor-check.js';

/** Whether a variable's value matters to the agent: its PATH, HOME and API settings. */
const MATTERS = (name: string): boolean =>
  name === 'PATH' ||
  name === 'HOME' ||
  name.startsWith('ANTHROPIC_') ||
  name === 'CLAUDE_CONFIG_DIR';

/** What tmux says when no server listens on the socket. */
const NO_SERVER = /no server running|error connecting to/i;

/** `show-environment -g` output: NAME=value, or -NAME for one removed. */
export function parseTmuxEnvironment(text: string): Map<string, string | null> {
  const env = new Map<string, string | null>();
  for (const line of text.split('\n')) {
    if (line.startsWith('-')) env.set(line.slice(1), null);
    else if (line.includes('='))
      env.set(line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1));
  }
  return env;
}

/** The names (never the values) of the variables that differ. */
export function differingNames(
  server: Map<string, string | null>,
  shell: NodeJS.ProcessEnv,
): string[] {
  const names = new Set([...server.keys(), ...Object.keys(shell)].filter(MATTERS));
  return [...names]
    .filter((name) => (server.get(name) ?? undefined) !== (shell[name] || undefined))
    .sort();
}

export async function checkTmuxEnvironment(ctx: DoctorContext): Promise<CheckResult> {
  const id = 'tmux-env';
  if (ctx.settings.runner !== 'tmux')
    return skip(id, `runner is ${ctx.settings.runner}: tmux is not used`);
  const socket = ctx.settings.tmuxSocket;
  const select = socket === null ? [] : ['-L', socket];
  const server = socket === null ? 'the default tmux server' : `tmux server ${socket}`;
  // As the runner calls tmux: outside any client's session.
  const env = Object.fromEntries(
    Object.entries(ctx.env).filter(([k]) => k !== 'TMUX' && k !== 'TMUX_PANE'),
  );
  if (ctx.probe.findProgram('tmux', ctx.env.PATH ?? '') === null)
    return skip(id, 'tmux is not on PATH');
  const out = await ctx.probe.run('tmux', [...select, 'show-environment', '-g'], env);
  if (!out.ok && NO_SERVER.test(out.reason))
    return pass(id, `${server} is not running: engine starts it with its own environment`);
  if (!out.ok) return skip(id, `cannot read the environment of ${server}: ${out.reason}`);
  const names = differingNames(parseTmuxEnvironment(out.stdout), ctx.env);
  if (names.length === 0)
    return pass(id, `${server} has this shell's PATH, HOME and ANTHROPIC_* variables`);
  const restart = `tmux ${select.join(' ')}${select.length > 0 ? ' ' : ''}kill-server once no agent runs there, or tmux set-environment -g NAME value`;
  return warn(
    id,
    `${server} keeps an older ${names.join(', ')} than this shell: engine's agents get the daemon's, but a window you open there gets the server's`,
    restart,
  );
}
