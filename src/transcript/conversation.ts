/**
 * A `claude-print` transcript (`--output-format stream-json --verbose`, one JSON object a line,
 * through the agent's terminal: `\r\n` line ends, a stray control sequence) as a conversation, in
 * the look of Claude Code's own screen:
 *
 *     Session 32c27fc8-… (Claude Code 2.1.330, claude-opus-5-5) in /project
 *     ● Bash(echo hi; ls)
 *       ⎿  hi
 *     ● Write(/project/notes.txt)
 *       ⎿  File created successfully at: /project/notes.txt
 *     ● Wrote notes.txt.
 *     Result: success (completed), 4 turns, $0.0006, 1.2 s
 *
 * A tool call shows what it acts on (a Bash command, the path of Edit, Write or Read, ...); a
 * tool's result is cut to its first lines. A line that is not JSON is shown as it is (the CLI's
 * own error messages); JSON of another kind (or cut short) is skipped. Pure: lines in, text out.
 */
import { StringDecoder } from 'node:string_decoder';
import { withoutControlSequences } from '../sessions/agent-log.js';
import { caretNotation } from './visible-text.js';

/** Lines of a tool result shown; the rest is counted. */
const RESULT_LINES = 3;
/** Characters of a line shown before it is cut. */
const LINE_CHARS = 200;

/** The field of a tool's input that says what the call acts on, by tool name. */
const TOOL_SUBJECT: Record<string, string> = {
  Bash: 'command',
  Edit: 'file_path',
  MultiEdit: 'file_path',
  Write: 'file_path',
  Read: 'file_path',
  NotebookEdit: 'notebook_path',
  Glob: 'pattern',
  Grep: 'pattern',
  WebFetch: 'url',
  WebSearch: 'query',
  Task: 'description',
  Skill: 'skill',
};

type Json = Record<string, unknown>;

export class Conversation {
  private readonly decoder = new StringDecoder('utf8');
  private partial = '';
  /** Tool names by tool_use id: a result names the call it answers. */
  private readonly tools = new Map<string, string>();

  /** Feeds the next bytes; returns the text of the lines they complete. */
  write(bytes: Uint8Array): string[] {
    const lines = (this.partial + this.decoder.write(bytes)).split('\n');
    this.partial = lines.pop() ?? '';
    return lines.flatMap((line) => this.line(line));
  }

  /** The text of a last line with no line end. */
  end(): string[] {
    const last = this.partial + this.decoder.end();
    this.partial = '';
    return this.line(last);
  }

  private line(raw: string): string[] {
    const text = withoutControlSequences(raw).trim();
    if (text === '') return [];
    if (!text.startsWith('{')) return [visible(text)];
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return [];
    }
    if (!isRecord(value)) return [];
    if (value.type === 'system' && value.subtype === 'init') return [initLine(value)];
    if (value.type === 'assistant') return this.assistant(value);
    if (value.type === 'user') return this.user(value);
    if (value.type === 'result') return [resultLine(value)];
    return [];
  }

  private assistant(value: Json): string[] {
    const out: string[] = [];
    for (const block of contentOf(value)) {
      if (block.type === 'text' && typeof block.text === 'string') {
        out.push(...bullet(block.text));
      } else if (block.type === 'tool_use' && typeof block.name === 'string') {
        if (typeof block.id === 'string') this.tools.set(block.id, block.name);
        out.push(...bullet(`${block.name}(${subjectOf(block.name, block.input)})`));
      }
    }
    return out;
  }

  private user(value: Json): string[] {
    const out: string[] = [];
    for (const block of contentOf(value)) {
      if (block.type === 'tool_result') out.push(...toolResult(block));
      else if (block.type === 'text' && typeof block.text === 'string')
        out.push(...indented('> ', block.text));
    }
    return out;
  }
}

function initLine(value: Json): string {
  const about: string[] = [];
  if (typeof value.claude_code_version === 'string')
    about.push(`Claude Code ${value.claude_code_version}`);
  if (typeof value.model === 'string') about.push(value.model);
  const version = about.length > 0 ? ` (${about.join(', ')})` : '';
  const cwd = typeof value.cwd === 'string' ? ` in ${value.cwd}` : '';
  return visible(`Session ${String(value.session_id ?? '?')}${version}${cwd}`);
}

/** `Result: success (completed), 4 turns, $0.0006, 1.2 s`: what the run ended with. */
function resultLine(value: Json): string {
  const outcome = typeof value.subtype === 'string' ? value.subtype : 'unknown';
  const reason = typeof value.terminal_reason === 'string' ? ` (${value.terminal_reason})` : '';
  const parts = [`Result: ${outcome}${reason}`];
  if (value.is_error === true) parts.push('error');
  if (typeof value.api_error_status === 'number') parts.push(`HTTP ${value.api_error_status}`);
  if (typeof value.num_turns === 'number')
    parts.push(`${value.num_turns} turn${value.num_turns === 1 ? '' : 's'}`);
  if (typeof value.total_cost_usd === 'number') parts.push(`$${value.total_cost_usd.toFixed(4)}`);
  if (typeof value.duration_ms === 'number')
    parts.push(`${(value.duration_ms / 1000).toFixed(1)} s`);
  return visible(parts.join(', '));
}

/** What a tool call acts on: its subject field, else its input as JSON. */
function subjectOf(name: string, input: unknown): string {
  if (!isRecord(input)) return '';
  const field = TOOL_SUBJECT[name];
  const subject = field === undefined ? undefined : input[field];
  return typeof subject === 'string' ? subject : JSON.stringify(input);
}

/** `  ⎿  first lines`, `     … +N lines`. */
function toolResult(block: Json): string[] {
  const text = resultText(block.content);
  const lines = text.replace(/\s+$/, '').split('\n');
  const shown = lines.slice(0, RESULT_LINES).map((line) => cut(line));
  if (block.is_error === true) shown[0] = `Error: ${shown[0] ?? ''}`;
  if (lines.length > RESULT_LINES) shown.push(`… +${lines.length - RESULT_LINES} lines`);
  return shown.map((line, i) => visible(`${i === 0 ? '  ⎿  ' : '     '}${line}`));
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter(isRecord)
    .map((part) => (typeof part.text === 'string' ? part.text : `[${String(part.type)}]`))
    .join('\n');
}

function contentOf(value: Json): Json[] {
  const message = value.message;
  if (!isRecord(message) || !Array.isArray(message.content)) return [];
  return message.content.filter(isRecord);
}

/** `● first line`, the next lines indented under it. */
function bullet(text: string): string[] {
  return indented('● ', text);
}

function indented(mark: string, text: string): string[] {
  const pad = ' '.repeat(mark.length);
  return text
    .replace(/\s+$/, '')
    .split('\n')
    .map((line, i) => visible(`${i === 0 ? mark : pad}${line}`));
}

function cut(line: string): string {
  return line.length > LINE_CHARS ? `${line.slice(0, LINE_CHARS)}…` : line;
}

/** Control characters shown in caret notation (`^[`): text that reaches no terminal as a command. */
function visible(text: string): string {
  return caretNotation(text.replace(/\s+$/, ''));
}

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
