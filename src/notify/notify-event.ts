/**
 * What a notification says, decided from the event alone (pure): which events notify, the
 * `--on-event` command's argument vector, the channels (`--notify-via`), and the one-line text
 * `notify-send` and tmux show.
 */
import { relative } from 'node:path';
import { fillTemplate, splitTemplate, type TemplateKind } from '../dispatch/agent-command.js';
import { EngineError } from '../errors.js';
import type { EventInput, EventName } from '../sessions/event-log.js';

/** The events that tell a human something: an item ended, or needs them, or the queue paused. */
export const NOTIFY_EVENTS: readonly EventName[] = [
  'done',
  'requeued',
  'gave-up',
  'waiting-for-input',
  'limit-paused',
  'limit-lifted',
];

export const NOTIFY_PLACEHOLDERS = [
  'event',
  'file',
  'noun',
  'session',
  'reason',
  'until',
  'time',
] as const;
type NotifyPlaceholder = (typeof NOTIFY_PLACEHOLDERS)[number];

const NOTIFY_COMMAND: TemplateKind = {
  placeholders: NOTIFY_PLACEHOLDERS,
  name: 'Notification command template',
};

/** The `--on-event` template as an argument vector; an error names what is wrong with it. */
export function splitNotifyTemplate(template: string): string[] {
  return splitTemplate(template, NOTIFY_COMMAND);
}

/**
 * The shell syntax in a command template, outside the quotes that would make it text: `>`, `|`,
 * `;`, `&&`, and `$(` or backticks outside single quotes. The command runs without a shell, so
 * each reaches it as a plain argument (`echo {event} >> f` prints `done >> f`): worth a warning.
 */
export function shellSyntaxIn(template: string): string[] {
  const found = new Set<string>();
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < template.length; i++) {
    const c = template[i] as string;
    const pair = template.slice(i, i + 2);
    if (quote === "'") {
      if (c === "'") quote = null;
      continue;
    }
    if (c === '\\') {
      i++;
      continue;
    }
    if (pair === '$(' || c === '`') found.add(c === '`' ? '`' : '$(');
    if (quote === '"') {
      if (c === '"') quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (pair === '&&' || pair === '>>' || pair === '||') {
      found.add(pair);
      i++;
    } else if ('>|;'.includes(c)) found.add(c);
  }
  return [...found];
}

export function notifies(event: EventInput): boolean {
  return NOTIFY_EVENTS.includes(event.event);
}

/** The command's argv for one event: each placeholder filled inside its own argument, or ''. */
export function notifyArgv(words: string[], event: EventInput & { time?: string }): string[] {
  const text = (value: unknown) => (value === undefined || value === null ? '' : String(value));
  const values: Record<NotifyPlaceholder, string> = {
    event: event.event,
    file: text(event.file),
    noun: text(event.noun),
    session: text(event.session),
    reason: text(event.reason),
    until: text(event.until),
    time: text(event.time),
  };
  return fillTemplate(words, values);
}

/** The built-in channels besides the command. */
export const NOTIFY_CHANNELS = ['desktop', 'tmux'] as const;
export type NotifyChannel = (typeof NOTIFY_CHANNELS)[number];

/** `--notify-via`: a comma list of channels, or `none`. */
export function parseNotifyVia(value: string): NotifyChannel[] {
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (names.length === 1 && names[0] === 'none') return [];
  const unknown = names.filter((name) => !(NOTIFY_CHANNELS as readonly string[]).includes(name));
  if (names.length === 0 || unknown.length > 0)
    throw new EngineError(
      `unknown notification channel '${unknown.join(',') || value}': expected a comma list of ${NOTIFY_CHANNELS.join(', ')}, or none`,
    );
  return [...new Set(names)] as NotifyChannel[];
}

/** One line for a human: `engine: done sessions/a.md #fix (reason) until T`. */
export function describeEvent(event: EventInput, root: string): string {
  const parts = [`engine: ${event.event}`];
  if (typeof event.file === 'string') parts.push(relative(root, event.file) || event.file);
  if (typeof event.noun === 'string') parts.push(`#${event.noun}`);
  if (typeof event.reason === 'string' && event.reason !== '') parts.push(`(${event.reason})`);
  if (event.until !== undefined && event.until !== null) parts.push(`until ${String(event.until)}`);
  return parts.join(' ');
}

/**
 * tmux reads a display-message text as a format: `#{...}` expands and `#(...)` runs a shell
 * command. Doubling every `#` shows the text as it is, so a file name cannot run anything.
 */
export function tmuxLiteral(text: string): string {
  return text.replace(/#/g, '##');
}
