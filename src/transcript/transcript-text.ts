/**
 * A session's transcript (agent.log) as text: a `claude-print` run's stream-json as a
 * conversation (conversation.ts), any other agent's terminal bytes as its screen showed them
 * (screen-text.ts). Read by `engine logs` and by the board (`transcriptTail`).
 */
import { agentLogEnd } from '../sessions/agent-log.js';
import { readStateRecord } from '../sessions/session-state.js';
import { Conversation } from './conversation.js';
import { ScreenText } from './screen-text.js';

/** How a transcript is read: a conversation, or a screen. */
export type TranscriptKind = 'conversation' | 'screen';

/** A renderer: bytes in as they come, text lines out as they settle, the rest at the end. */
interface TranscriptText {
  write(bytes: Uint8Array): Promise<string[]>;
  end(): string[];
}

/** How much of the end of agent.log a tail is rendered from. */
const TAIL_BYTES = 1024 * 1024;

/**
 * The kind of the session in `dir`, from the agent profile its record names (the daemon writes
 * `agent` into .state.json at launch). A record without one (written before it existed), or
 * none at all, is read as a screen: any terminal output reads as text that way.
 */
async function transcriptKind(dir: string): Promise<TranscriptKind> {
  const read = await readStateRecord(dir);
  return 'state' in read && read.state.agent === 'claude-print' ? 'conversation' : 'screen';
}

function transcriptText(kind: TranscriptKind): TranscriptText {
  if (kind === 'screen') return new ScreenText();
  const conversation = new Conversation();
  return {
    write: (bytes) => Promise.resolve(conversation.write(bytes)),
    end: () => conversation.end(),
  };
}

/**
 * The text of a transcript read piece by piece (followed, maybe): its lines as they settle, then
 * the rest. The kind is read with the first piece: the daemon records a session before its agent
 * starts, so a transcript followed from its claim has its record by then.
 */
export async function* transcriptLines(
  dir: string,
  pieces: AsyncIterable<Uint8Array>,
): AsyncGenerator<string[]> {
  let text: TranscriptText | null = null;
  for await (const piece of pieces) {
    text ??= transcriptText(await transcriptKind(dir));
    yield await text.write(piece);
  }
  if (text !== null) yield text.end();
}

/** The text of `bytes`, whole. */
export async function renderTranscript(kind: TranscriptKind, bytes: Uint8Array): Promise<string[]> {
  const text = transcriptText(kind);
  const lines = await text.write(bytes);
  lines.push(...text.end());
  return lines;
}

/**
 * The last `lines` lines of the text of the session in `dir` (for the board's cards); none when
 * it has no agent.log yet. Rendered from the log's last MiB, from a line start: an interactive
 * screen started before that is seen from there.
 */
export async function transcriptTail(dir: string, lines: number): Promise<string[]> {
  const bytes = await agentLogEnd(dir, TAIL_BYTES);
  if (bytes === null || lines <= 0) return [];
  const text = await renderTranscript(await transcriptKind(dir), bytes);
  return text.slice(-lines);
}
