/** `engine attach`: from a request file's **Session** line to its agent's tmux window. */
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { projectJudgeOptions } from '../settings/load-settings.js';
import { EngineError } from '../errors.js';
import { readTextFile } from '../files/read-text-file.js';
import { systemProbe } from '../process/process-identity.js';
import { judgeSession } from '../sessions/judge-session.js';
import { startTokenTime } from '../sessions/session-markers.js';
import { readSessionState, type SessionState } from '../sessions/session-state.js';
import { tmuxArgs } from '../runners/tmux-runner.js';
import { carrierTags } from '../tags/edit-tags.js';
import { sessionReference } from '../tags/lifecycle-edits.js';
import { scanTags } from '../tags/scan-tags.js';
import { lifecycleTag } from '../tags/tag-name.js';
import { projectRoot } from './project-root.js';
import { namedSessionDir } from './request-session.js';

export async function attach(args: { file: string; root?: string }): Promise<void> {
  const { file } = await readTextFile(args.file);
  const root = await projectRoot(args.root, dirname(resolve(args.file)));
  const ref = sessionReference(file.text);
  if (!ref)
    throw new EngineError(`${args.file} has no **Session**: line: no agent was started for it`);
  const dir = await namedSessionDir(root, ref, { file: args.file, line: 'Session' });
  const read = await readSessionState(dir);
  if (!('state' in read)) throw new EngineError(`No usable session record in ${dir}`);
  const judge = await projectJudgeOptions(root, process.env);
  const records = { startTokenAt: await startTokenTime(dir) };
  const verdict = judgeSession(read.state, records, new Date(), judge, systemProbe);
  if (!verdict.alive) {
    const done = lifecycleTag('done', read.state.noun);
    // An agent that ended after its item was done has nothing to attach to; that is no failure.
    if (carrierTags(scanTags(file.text)).some((o) => o.tag === done)) {
      throw new EngineError(
        `${args.file} is done (${done}); its agent has exited; see engine logs ${args.file}`,
      );
    }
    throw new EngineError(`Session ${ref} has no live agent: ${verdict.reason}`);
  }
  attachTmux(read.state);
}

/** Selects the agent's window and attaches to it; tmux's exit code when it cannot. */
function attachTmux(state: SessionState): void {
  const tmux = state.tmux;
  if (!tmux?.pane)
    throw new EngineError(
      `Session ${state.sessionRef} has no tmux window (runner ${state.runner}, status ${state.status})`,
    );
  const env = { ...process.env };
  const inside = env.TMUX !== undefined;
  const socket = tmux.socket ?? undefined;
  const run = (...argv: string[]) =>
    spawnSync('tmux', tmuxArgs(socket, ...argv), { stdio: 'inherit', env });
  if (run('select-window', '-t', tmux.pane).status !== 0) {
    throw new EngineError(`The agent's tmux window ${tmux.pane} is gone (status ${state.status})`);
  }
  const result =
    inside && socket === undefined
      ? run('switch-client', '-t', tmux.pane)
      : run('attach-session', '-t', `=${tmux.session}`);
  if (result.status === 0) return;
  // tmux said why on the terminal; its exit code is the command's (1 when it had none).
  const how = result.error
    ? result.error.message
    : result.status === null
      ? `killed by ${String(result.signal)}`
      : `exit ${result.status}`;
  throw new EngineError(`tmux could not attach to the agent's window ${tmux.pane} (${how})`, {
    exitCode: result.status ?? 1,
  });
}
