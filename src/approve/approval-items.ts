/**
 * The items awaiting human approval: one per file and `#needs-X` tag on the Tags line or in
 * front matter (the carrier; a tag on both counts once, since one swap changes both), and one per
 * line and `#needs-X` tag in prose (an inline item: a list item, a paragraph, a heading).
 */
import { basename } from 'node:path';
import { findTaggedFiles, type SkippedFile } from '../tags/find-tagged-files.js';
import { LineIndex } from '../tags/line-index.js';
import type { ScanPool } from '../tags/scan-pool.js';
import type { TagOccurrence, TagPlace } from '../tags/scan-tags.js';
import { lifecycleOf, parseTagPattern } from '../tags/tag-name.js';

export interface ApprovalItem {
  path: string;
  /** The first level-1 heading's text, or the file name. */
  title: string;
  /** The `#needs-X` tag. */
  tag: string;
  /** X. */
  noun: string;
  /** 1-based line and column of the (first) occurrence. */
  line: number;
  column: number;
  place: TagPlace;
}

export interface ApprovalList {
  items: ApprovalItem[];
  skipped: SkippedFile[];
}

/** An inline item is edited on its own line (`--inline N`); the others on the Tags line. */
export function isInline(item: Pick<ApprovalItem, 'place'>): boolean {
  return item.place === 'prose';
}

/** Lists the `#needs-X` items under `paths`, by path and then by position in the file. */
export async function listApprovalItems(paths: string[], pool?: ScanPool): Promise<ApprovalList> {
  const { matches, skipped } = await findTaggedFiles({
    paths,
    pattern: parseTagPattern('#needs-*'),
    pool,
  });
  const items = matches.flatMap((m) => approvalItemsIn(m.path, m.text, m.occurrences));
  return { items, skipped };
}

/** The approval items of one file, given the occurrences `scanTags` found in `text`. */
export function approvalItemsIn(
  path: string,
  text: string,
  occurrences: TagOccurrence[],
): ApprovalItem[] {
  const title = titleOf(text, path);
  const seen = new Set<string>();
  const items: ApprovalItem[] = [];
  const sorted = [...occurrences].sort((a, b) => a.line - b.line || a.column - b.column);
  for (const o of sorted) {
    const lifecycle = lifecycleOf(o.tag);
    if (lifecycle?.state !== 'needs') continue;
    const key = o.place === 'prose' ? `${o.tag} ${o.line}` : o.tag;
    if (seen.has(key)) continue;
    seen.add(key);
    items.push({
      path,
      title,
      tag: o.tag,
      noun: lifecycle.noun,
      line: o.line,
      column: o.column,
      place: o.place,
    });
  }
  return items;
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})/;
const ATX_H1 = /^ {0,3}#(?:[ \t]+(.*?))?[ \t]*$/;
const SETEXT_H1 = /^ {0,3}=+[ \t]*$/;

/**
 * The text of the first level-1 heading (ATX `# Title` or setext `Title\n===`) outside front
 * matter, fenced code and HTML comments; the file name when there is none. A display helper:
 * a line scan, not a full parse.
 */
export function titleOf(text: string, path: string): string {
  const lines = text.split(/\r?\n/);
  let i = 0;
  const first = lines[0]?.trimEnd();
  if (first === '---' || first === '+++') {
    const close = lines.findIndex(
      (line, k) =>
        k > 0 && (line.trimEnd() === first || (first === '---' && line.trimEnd() === '...')),
    );
    if (close > 0) i = close + 1;
  }
  let fence: string | null = null;
  let inComment = false;
  for (; i < lines.length; i++) {
    const line = lines[i] as string;
    if (fence !== null) {
      const close = FENCE_OPEN.exec(line);
      const marker = close?.[1];
      if (
        marker &&
        marker[0] === fence[0] &&
        marker.length >= fence.length &&
        line.trim() === marker
      ) {
        fence = null;
      }
      continue;
    }
    if (inComment) {
      if (line.includes('-->')) inComment = false;
      continue;
    }
    const open = FENCE_OPEN.exec(line);
    if (open) {
      fence = open[1] as string;
      continue;
    }
    if (/^ {0,3}<!--/.test(line)) {
      if (!line.includes('-->')) inComment = true;
      continue;
    }
    const atx = ATX_H1.exec(line);
    if (atx) {
      const heading = (atx[1] ?? '').replace(/(?:^|[ \t]+)#+$/, '').trim();
      return heading === '' ? basename(path) : heading;
    }
    const next = lines[i + 1];
    if (
      next !== undefined &&
      SETEXT_H1.test(next) &&
      line.trim() !== '' &&
      !/^(?: {4}|\t)/.test(line)
    ) {
      return line.trim();
    }
  }
  return basename(path);
}

export interface ContextLine {
  line: number;
  text: string;
}

/** Lines `line - radius` .. `line + radius` of `text` (clipped to the file). */
export function contextLines(text: string, line: number, radius = 2): ContextLine[] {
  const index = new LineIndex(text);
  const out: ContextLine[] = [];
  for (let k = Math.max(1, line - radius); k <= Math.min(index.count, line + radius); k++) {
    out.push({ line: k, text: index.lineText(k) });
  }
  return out;
}

/** How an item's place reads in messages: "on the Tags line", "in front matter", "at line N". */
export function describePlace(item: Pick<ApprovalItem, 'place' | 'line'>): string {
  if (item.place === 'tags-line') return 'on the Tags line';
  if (item.place === 'front-matter') return 'in front matter';
  return `at line ${item.line}`;
}
