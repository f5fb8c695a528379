/** `engine logs`: from a request file (or a session directory) to its agent's transcript. */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { EngineError } from '../errors.js';
import { readTextFile } from '../files/read-text-file.js';
import { agentLogChunks } from '../sessions/agent-log.js';
import { resolveSessionRef } from '../sessions/session-dir.js';
import { lastPriorSessionOf, sessionReferenceOf } from '../tags/lifecycle-edits.js';
import { scanTags } from '../tags/scan-tags.js';
import { printBytes } from './output.js';

export async function showLogs(args: {
  target: string;
  root: string;
  follow: boolean;
}): Promise<void> {
  const dir = await sessionDirOf(args.target, resolve(args.root));
  for await (const chunk of agentLogChunks(dir, { follow: args.follow })) await printBytes(chunk);
}

/**
 * A session directory as it is; for a request file, its latest attempt: the session on its
 * Session line while claimed (or done), else the last Prior Session of its Recovery notes.
 */
async function sessionDirOf(target: string, root: string): Promise<string> {
  const info = await stat(target).catch(() => null);
  if (info === null) throw new EngineError(`${target}: no such file or directory`);
  if (info.isDirectory()) return resolve(target);
  const { file } = await readTextFile(target);
  const scan = scanTags(file.text);
  const ref = sessionReferenceOf(scan) ?? lastPriorSessionOf(scan);
  if (!ref) {
    throw new EngineError(
      `${target} has no **Session**: line and no **Prior Session**: no agent was started for it`,
    );
  }
  const dir = resolveSessionRef(root, ref);
  if (!dir) throw new EngineError(`${target}: Session '${ref}' is not under ${root} (use --root)`);
  return dir;
}
