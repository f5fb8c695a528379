/**
 * The writes of `engine tag approve`. Each one is a pure edit from `tags/edit-tags.ts` run
 * through `editFile`, the one compare-and-swap writer, so a tag someone else changed meanwhile
 * is never overwritten: the edit refuses with a PreconditionError and nothing is written.
 */
import { PreconditionError } from '../errors.js';
import { editFile } from '../files/tag-file.js';
import {
  carrierTags,
  LineOutOfRangeError,
  removeTag,
  swapTags,
  TagMissingError,
} from '../tags/edit-tags.js';
import { LineIndex } from '../tags/line-index.js';
import { looksLikeTagsLine, scanTags, type TagScan } from '../tags/scan-tags.js';
import { LIFECYCLE_TRANSITIONS, lifecycleOf, transitionTags } from '../tags/tag-name.js';

/** Where an approved item goes: `#delegated-X` (dispatch it) or `#next-X` (for the next skill run to claim). */
export type ApproveTarget = 'delegated' | 'next';

const TRANSITION_TO = { delegated: 'approve', next: 'pick' } as const;

export interface ApproveFileResult {
  /** Each `#needs-X` changed, with the tag it became. */
  swapped: Array<{ from: string; to: string }>;
}

/**
 * Swaps every `#needs-X` on the Tags line and in front matter of `file` (or, with `line`, every
 * one on that line) to `#<to>-X`, in one write. Refuses when there is none.
 */
export async function approveFile(
  file: string,
  to: ApproveTarget,
  line?: number,
): Promise<ApproveFileResult> {
  let swapped: ApproveFileResult['swapped'] = [];
  await editFile(file, (text) => {
    const scan = scanTags(text);
    if (line !== undefined && (line < 1 || line > scan.lines.count)) {
      throw new LineOutOfRangeError(line, scan.lines.count);
    }
    const pool =
      line === undefined ? carrierTags(scan) : scan.occurrences.filter((o) => o.line === line);
    const transition = TRANSITION_TO[to];
    const needs = [...new Set(pool.map((o) => o.tag))].filter(
      (tag) => lifecycleOf(tag)?.state === LIFECYCLE_TRANSITIONS[transition].from,
    );
    if (needs.length === 0) {
      const where = line === undefined ? 'on Tags line' : `at line ${line}`;
      const hint = line === undefined ? notTagsLineHint(scan, transition) : '';
      throw new PreconditionError(`No #needs- tag found ${where} of ${file}${hint}`);
    }
    swapped = needs.map((tag) => ({
      from: tag,
      to: transitionTags(transition, (lifecycleOf(tag) as { noun: string }).noun).to,
    }));
    let out = text;
    for (const { from, to: next } of swapped) out = swapTags(out, [from], next, line);
    return out;
  });
  return { swapped };
}

/**
 * When the file has no Tags line read as one but a line meant as one holding a `#needs-X`
 * (`Tags: #needs-fix`): says so, since the refusal alone reads as if the tag were missing.
 */
function notTagsLineHint(scan: TagScan, transition: 'approve' | 'pick'): string {
  const from = LIFECYCLE_TRANSITIONS[transition].from;
  const meant = scan.occurrences.find(
    (o) =>
      o.place === 'prose' &&
      lifecycleOf(o.tag)?.state === from &&
      looksLikeTagsLine(scan.lines.lineText(o.line)),
  );
  if (!meant) return '';
  return `: line ${meant.line} holds ${meant.tag} but is not the Tags line, which starts with **Tags**: (docs/TAGS.md)`;
}

export type ItemAction = 'approve' | 'next' | 'drop';

export interface ItemEdit {
  path: string;
  tag: string;
  noun: string;
  /** The line of an inline item; undefined for a Tags line / front matter item. */
  line?: number;
  /**
   * The inline line's text as it was shown (the board's card): the edit refuses when the line
   * reads otherwise now, so a card older than the file never approves another occurrence that a
   * removed line above moved onto its line number.
   */
  lineText?: string;
}

export interface ItemEditResult {
  /** The tag written in place of `tag` (undefined for a drop). */
  newTag?: string;
  /** Lines added (positive) or removed (negative) by the write: a front matter entry removed. */
  lineDelta: number;
}

/**
 * Applies one decision to one item: approve (`#needs-X` -> `#delegated-X`), next (-> `#next-X`)
 * or drop (remove the tag). Throws PreconditionError when the tag is no longer where it was.
 */
export async function applyItemAction(edit: ItemEdit, action: ItemAction): Promise<ItemEditResult> {
  const newTag =
    action === 'drop'
      ? undefined
      : transitionTags(action === 'approve' ? 'approve' : 'pick', edit.noun).to;
  let lineDelta = 0;
  await editFile(edit.path, (text) => {
    if (edit.line !== undefined && edit.lineText !== undefined) {
      const lines = new LineIndex(text);
      if (edit.line > lines.count || lines.lineText(edit.line) !== edit.lineText)
        throw new PreconditionError(
          `line ${edit.line} of ${edit.path} changed since it was shown: nothing changed`,
        );
    }
    let out: string | null;
    if (newTag === undefined) {
      out = removeTag(text, edit.tag, edit.line);
      // Removing from the Tags line is a no-op when the tag is gone: here that is a conflict.
      if (out === null) throw new TagMissingError([edit.tag], edit.line, true);
    } else {
      out = swapTags(text, [edit.tag], newTag, edit.line);
    }
    lineDelta = new LineIndex(out).count - new LineIndex(text).count;
    return out;
  });
  return { newTag, lineDelta };
}
