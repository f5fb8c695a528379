/**
 * The agent command template: split into an argument vector first, then each placeholder is
 * filled inside its own argument. Nothing ever passes through a shell, so a request file named
 * `$(touch x).md` or `a; rm -rf b.md` stays one literal argument.
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
] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];
const PLACEHOLDER = /\{([a-z_]+)\}/g;

/** Splits like a POSIX shell does words: quotes and backslashes, no expansion of any kind. */
export function splitTemplate(template: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < template.length; i++) {
    const c = template[i] as string;
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (
        c === '\\' &&
        i + 1 < template.length &&
        '"\\$`'.includes(template[i + 1] as string)
      ) {
        word += template[++i];
      } else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < template.length) {
      word += template[++i];
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
  if (quote)
    throw new EngineError(`Agent command template has an unclosed ${quote} quote: ${template}`);
  if (inWord) words.push(word);
  if (words.length === 0) throw new EngineError('Agent command template is empty');
  for (const w of words) {
    for (const m of w.matchAll(PLACEHOLDER)) {
      if (!PLACEHOLDERS.includes(m[1] as Placeholder)) {
        throw new EngineError(
          `Agent command template has an unknown placeholder {${m[1]}}; known: ${PLACEHOLDERS.map((p) => `{${p}}`).join(' ')}`,
        );
      }
    }
  }
  return words;
}

export function fillTemplate(words: string[], values: Record<Placeholder, string>): string[] {
  return words.map((w) =>
    w.replace(PLACEHOLDER, (all, name: string) => values[name as Placeholder] ?? all),
  );
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
