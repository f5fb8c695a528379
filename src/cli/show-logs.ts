/** `engine logs`: from a request file (or a session directory) to its agent's transcript. */
import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { projectJudgeOptions } from '../settings/load-settings.js';
import { EngineError } from '../errors.js';
import { readTextFile } from '../files/read-text-file.js';
import { agentLogChunks } from '../sessions/agent-log.js';
import { lastPriorSessionOf, sessionReferenceOf } from '../tags/lifecycle-edits.js';
import { scanTags } from '../tags/scan-tags.js';
import { transcriptLines } from '../transcript/transcript-text.js';
import { printBytes } from './output.js';
import { projectRoot } from './project-root.js';
import { namedSessionDir } from './request-session.js';

export async function showLogs(args: {
  target: string;
  root?: string;
  follow: boolean;
  raw: boolean;
}): Promise<void> {
  const { dir, root } = await sessionDirOf(args.target, args.root);
  // A followed session ends when the daemon would judge it ended: by the project's settings.
  const judge = await projectJudgeOptions(root, process.env);
  const chunks = agentLogChunks(dir, { follow: args.follow, judge });
  if (args.raw) {
    for await (const chunk of chunks) await printBytes(chunk);
    return;
  }
  // The same text whether followed or not.
  for await (const lines of transcriptLines(dir, chunks)) await printLines(lines);
}

async function printLines(lines: string[]): Promise<void> {
  if (lines.length > 0) await printBytes(Buffer.from(lines.map((line) => `${line}\n`).join('')));
}

/**
 * A session directory as it is; for a request file, its latest attempt: the session on its
 * Session line while claimed (or done), else the last Prior Session of its Recovery notes. The
 * project root is looked for from the target (docs/CLI.md, "The project root").
 */
async function sessionDirOf(
  target: string,
  givenRoot: string | undefined,
): Promise<{ dir: string; root: string }> {
  const info = await stat(target).catch(() => null);
  if (info === null) throw new EngineError(`${target}: no such file or directory`);
  if (info.isDirectory())
    return { dir: resolve(target), root: await projectRoot(givenRoot, target) };
  const { file } = await readTextFile(target);
  const root = await projectRoot(givenRoot, dirname(resolve(target)));
  const scan = scanTags(file.text);
  const session = sessionReferenceOf(scan);
  const ref = session ?? lastPriorSessionOf(scan);
  if (!ref) {
    throw new EngineError(
      `${target} has no **Session**: line and no **Prior Session**: no agent was started for it`,
    );
  }
  const line = session === null ? 'Prior Session' : 'Session';
  return { dir: await namedSessionDir(root, ref, { file: target, line }), root };
}
