/**
 * `engine new`'s request file: its name (date + slug, a numbered suffix instead of ever
 * overwriting) and its template. The title goes through proseText, as engine's own lines do, so
 * a title that quotes a tag (`#delegated-x`) never becomes one.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { EngineError, messageOf } from '../errors.js';
import { createWhole } from '../files/create-whole.js';
import type { DispatchTable } from '../dispatch/dispatch-table.js';
import { proseText } from '../tags/engine-prose.js';

/** Tried names per request before giving up: `-2` .. `-999` after the plain one. */
const MAX_SUFFIX = 999;
const SLUG_LENGTH = 60;

export interface NewRequest {
  noun: string;
  title: string;
  /** `#delegated-NOUN` (approved at once) instead of `#needs-NOUN`. */
  approve: boolean;
}

/** Refuses a noun the table has no row for, listing the nouns it has. */
export function checkNoun(noun: string, table: DispatchTable, source: string): void {
  if (table.has(noun)) return;
  const nouns = [...table.keys()].sort().join(', ');
  throw new EngineError(
    `no §TAG_DISPATCH row for '${noun}' in ${source}; its nouns: ${nouns}. Add a row there, or use one of these`,
  );
}

/** The file's text: H1 the title, the Tags line, a section to fill in. */
export function requestText(request: NewRequest): string {
  const title = proseText(request.title);
  if (title === '') throw new EngineError('the title is empty: give the request a title');
  const state = request.approve ? 'delegated' : 'needs';
  return [
    `# ${title}`,
    `**Tags**: #${state}-${request.noun}`,
    '',
    '## Request',
    '',
    '<!-- What to do, where, and how to tell it is done. The agent reads this section. -->',
    '',
  ].join('\n');
}

/** `2026-11-26-fix-the-login-page.md`, then `-2`, `-3`, ... for the n-th try. */
export function requestName(date: Date, title: string, attempt: number): string {
  const day = [
    date.getFullYear(),
    String(date.getMonth() + 1).padStart(2, '0'),
    String(date.getDate()).padStart(2, '0'),
  ].join('-');
  const slug =
    title
      .normalize('NFKD')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .slice(0, SLUG_LENGTH)
      .replace(/^-+|-+$/g, '') || 'request';
  return `${day}-${slug}${attempt > 1 ? `-${attempt}` : ''}.md`;
}

/** Writes the request under `<root>/sessions/`, never over a file; returns its path. */
export async function writeNewRequest(
  root: string,
  request: NewRequest,
  now: Date,
): Promise<string> {
  const content = requestText(request);
  const dir = join(root, 'sessions');
  await mkdir(dir, { recursive: true }).catch((error: unknown) => {
    throw new EngineError(`cannot make ${dir}: ${messageOf(error)}`, { cause: error });
  });
  for (let attempt = 1; attempt <= MAX_SUFFIX; attempt++) {
    const path = join(dir, requestName(now, request.title, attempt));
    const made = await createWhole(path, content).catch((error: unknown) => {
      throw new EngineError(`cannot write ${path}: ${messageOf(error)}`, { cause: error });
    });
    if (made) return path;
  }
  throw new EngineError(
    `${MAX_SUFFIX} requests named ${requestName(now, request.title, 1)} exist in ${dir}: give another title`,
  );
}
