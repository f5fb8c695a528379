/**
 * The agent command template: split into an argument vector first, then each placeholder is
 * filled inside its own argument. Nothing ever passes through a shell, so a request file named
 * `$(touch x).md` or `a; rm -rf b.md` stays one literal argument. The notification command
 * (src/notify/) is a template of the same kind, with placeholders of its own.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { EngineError } from '../errors.js';

export const PLACEHOLDERS = [
  'skill',
  'noun',
  'file',
  'session',
  'tag',
  'agent_session',
  'prior_agent_session',
  'running',
] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];
const PLACEHOLDER = /\{([a-z_]+)\}/g;

/** Which placeholders a template may use, and its name in errors. */
export interface TemplateKind {
  placeholders: readonly string[];
  name: string;
}

const AGENT_COMMAND: TemplateKind = { placeholders: PLACEHOLDERS, name: 'Agent command template' };

/**
 * Splits like a POSIX shell does words: quotes and backslashes, no expansion of any kind.
 * `unclosed` gives the error for a quote left open. The one splitter of engine's command lines
 * (agent and notification templates, the `$EDITOR` of `engine new --edit`).
 */
export function splitShellWords(text: string, unclosed: (quote: string) => string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && i + 1 < text.length && '"\\$`'.includes(text[i + 1] as string)) {
        word += text[++i];
      } else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new EngineError(unclosed(quote));
  if (inWord) words.push(word);
  return words;
}

/** A template split into words, its placeholders checked against its kind's. */
export function splitTemplate(template: string, kind: TemplateKind = AGENT_COMMAND): string[] {
  const words = splitShellWords(
    template,
    (quote) => `${kind.name} has an unclosed ${quote} quote: ${template}`,
  );
  if (words.length === 0) throw new EngineError(`${kind.name} is empty`);
  for (const w of words) {
    for (const m of w.matchAll(PLACEHOLDER)) {
      if (!kind.placeholders.includes(m[1] as string)) {
        throw new EngineError(
          `${kind.name} has an unknown placeholder {${m[1]}}; known: ${kind.placeholders.map((p) => `{${p}}`).join(' ')}`,
        );
      }
    }
  }
  return words;
}

export function fillTemplate<P extends string>(
  words: string[],
  values: Record<P, string>,
): string[] {
  return words.map((w) => w.replace(PLACEHOLDER, (all, name: string) => values[name as P] ?? all));
}

/** Whether a split template uses the placeholder anywhere. */
export function usesPlaceholder(words: string[], name: Placeholder): boolean {
  return words.some((w) => [...w.matchAll(PLACEHOLDER)].some((m) => m[1] === name));
}

/** Finds a program on PATH the way execvp would; null when it is not there. */
export function findProgram(program: string, path = process.env.PATH ?? ''): string | null {
  const candidates = program.includes('/')
    ? [program]
    : path
        .split(delimiter)
        .filter(Boolean)
        .map((d) => join(d, program));
  for (const candidate of candidates) {
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      continue;
    }
  }
  return null;
}
