/** `engine attach`: from a request file's **Session** line to its agent's tmux window. */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { EngineError } from '../errors.js';
import { readTextFile } from '../files/read-text-file.js';
import { systemProbe } from '../process/process-identity.js';
import { DEFAULT_JUDGE_OPTIONS, judgeSession } from '../sessions/judge-session.js';
import { resolveSessionRef } from '../sessions/session-dir.js';
import { startTokenTime } from '../sessions/session-markers.js';
import { readSessionState } from '../sessions/session-state.js';
import { tmuxArgs } from '../runners/tmux-runner.js';
import { sessionReference } from '../tags/lifecycle-edits.js';

export async function attach(args: { file: string; root: string }): Promise<void> {
  const { file } = await readTextFile(args.file);
  const ref = sessionReference(file.text);
  if (!ref)
    throw new EngineError(`${args.file} has no **Session**: line: no agent was started for it`);
  const dir = resolveSessionRef(resolve(args.root), ref);
  if (!dir)
    throw new EngineError(
      `${args.file}: Session '${ref}' is not under ${resolve(args.root)} (use --root)`,
    );
  const read = await readSessionState(dir);
  if (!('state' in read)) throw new EngineError(`No usable session record in ${dir}`);
  const records = { startTokenAt: await startTokenTime(dir) };
  const verdict = judgeSession(read.state, records, new Date(), DEFAULT_JUDGE_OPTIONS, systemProbe);
  if (!verdict.alive) throw new EngineError(`Session ${ref} has no live agent: ${verdict.reason}`);
  const tmux = read.state.tmux;
  if (!tmux?.pane)
    throw new EngineError(
      `Session ${ref} has no tmux window (runner ${read.state.runner}, status ${read.state.status})`,
    );
  const env = { ...process.env };
  const inside = env.TMUX !== undefined;
  const socket = tmux.socket ?? undefined;
  const run = (...argv: string[]) =>
    spawnSync('tmux', tmuxArgs(socket, ...argv), { stdio: 'inherit', env });
  if (run('select-window', '-t', tmux.pane).status !== 0) {
    throw new EngineError(
      `The agent's tmux window ${tmux.pane} is gone (status ${read.state.status})`,
    );
  }
  const result =
    inside && socket === undefined
      ? run('switch-client', '-t', tmux.pane)
      : run('attach-session', '-t', `=${tmux.session}`);
  process.exitCode = result.status ?? 1;
}
