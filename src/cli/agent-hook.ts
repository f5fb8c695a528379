/**
 * `engine agent-hook`, hidden: the command of the Claude Code hooks engine gives each Claude run
 * (src/agents/claude-settings.ts). Reads the hook's JSON input on stdin and records the agent's
 * state in `$ENGINE_SESSION_DIR/agent-state.json`. It prints nothing and never fails: a hook's
 * output or exit code could steer the agent it reports on.
 */
import type { CommandModule } from 'yargs';

/** Hook inputs are small; a PostToolUse carries the tool's output, which may not be. */
const MAX_INPUT_BYTES = 16 * 1024 * 1024;

export const agentHookCommand: CommandModule<object, object> = {
  command: 'agent-hook',
  describe: false,
  handler: async () => {
    try {
      const input = await readInput();
      const dir = process.env.ENGINE_SESSION_DIR;
      if (!dir || input === null) return;
      const { recordAgentHook } = await import('../agents/agent-state.js');
      await recordAgentHook(dir, JSON.parse(input), new Date());
    } catch {
      // Not JSON, no session directory to write to, a closed stdin: nothing to record.
    }
  },
};

/** All of stdin (read to its end, so the writer never sees a closed pipe); null when too big. */
async function readInput(): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    if (size <= MAX_INPUT_BYTES) chunks.push(chunk as Buffer);
  }
  return size <= MAX_INPUT_BYTES ? Buffer.concat(chunks).toString('utf8') : null;
}
