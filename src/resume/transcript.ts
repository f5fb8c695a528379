/**
 * Where Claude Code keeps a session's transcript: `<config>/projects/<cwd>/<session-id>.jsonl`,
 * the config directory being `$CLAUDE_CONFIG_DIR`, else `$HOME/.claude`, and the directory of the
 * working directory its path with every character but a letter or digit made `-` (seen with
 * 2.1.330: `/tmp/wd_x.y` gives `-tmp-wd-x-y`).
 */
import { realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The transcript of `sessionId` run in `cwd`, under the agent's environment `env`. */
export function transcriptPath(env: NodeJS.ProcessEnv, cwd: string, sessionId: string): string {
  const config = env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), '.claude');
  return join(config, 'projects', cwd.replace(/[^a-zA-Z0-9]/g, '-'), `${sessionId}.jsonl`);
}

export async function transcriptExists(
  env: NodeJS.ProcessEnv,
  cwd: string,
  sessionId: string,
): Promise<boolean> {
  try {
    // Claude Code names the directory after the real path of its working directory.
    const real = await realpath(cwd).catch(() => cwd);
    return (await stat(transcriptPath(env, real, sessionId))).isFile();
  } catch {
    return false;
  }
}
