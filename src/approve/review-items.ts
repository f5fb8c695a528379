/**
 * The approval walk: for each item, re-read its file (it may have changed since the list was
 * made), show it, ask for a decision and apply it. Terminal I/O is the caller's (`ReviewIO`),
 * so the walk itself prints nothing.
 */
import { EngineError } from '../errors.js';
import { readTextFile } from '../files/read-text-file.js';
import { carrierTags } from '../tags/edit-tags.js';
import { scanTags } from '../tags/scan-tags.js';
import {
  contextLines,
  describePlace,
  isInline,
  titleOf,
  type ApprovalItem,
  type ContextLine,
} from './approval-items.js';
import { applyItemAction, type ItemAction } from './approve-edits.js';

export type Decision = 'approve' | 'next' | 'skip' | 'drop' | 'view' | 'quit';

export interface ReviewStep {
  /** 1-based position in the walk. */
  index: number;
  total: number;
  /** The item as it is in the file now (line and title re-read). */
  item: ApprovalItem;
  context: ContextLine[];
  /** The file's current text. */
  text: string;
}

export interface ReviewIO {
  /** Shows an item before its first question. */
  show(step: ReviewStep): void;
  /** Asks for one decision. */
  ask(step: ReviewStep): Promise<Decision>;
  /** Prints the whole file (the `v` key); the question is asked again afterwards. */
  view(step: ReviewStep): void;
  /** What happened to an item, or why it was skipped. */
  report(message: string): void;
}

/** One tag the walk changed: `to` is undefined when the tag was dropped. */
export interface ReviewChange {
  path: string;
  from: string;
  to: string | undefined;
}

export interface ReviewSummary {
  approved: number;
  next: number;
  /** Items the user skipped: their files are untouched. */
  skipped: number;
  dropped: number;
  /** Items that were gone or changed when their turn came, or whose write was refused. */
  notChanged: number;
  /** Items not reached because of a quit. */
  unreviewed: number;
  /** Every change written, in walk order. */
  changes: ReviewChange[];
}

export async function reviewItems(items: ApprovalItem[], io: ReviewIO): Promise<ReviewSummary> {
  const summary: ReviewSummary = {
    approved: 0,
    next: 0,
    skipped: 0,
    dropped: 0,
    notChanged: 0,
    unreviewed: 0,
    changes: [],
  };
  // Our own writes can remove a front matter line; inline items below it move up with it.
  const lineShift = new Map<string, number>();
  for (const [i, listed] of items.entries()) {
    const shifted = isInline(listed)
      ? { ...listed, line: listed.line + (lineShift.get(listed.path) ?? 0) }
      : listed;
    const current = await locate(shifted);
    if ('gone' in current) {
      io.report(current.gone);
      summary.notChanged++;
      continue;
    }
    const step: ReviewStep = {
      index: i + 1,
      total: items.length,
      item: current.item,
      context: contextLines(current.text, current.item.line),
      text: current.text,
    };
    io.show(step);
    let decision = await io.ask(step);
    while (decision === 'view') {
      io.view(step);
      decision = await io.ask(step);
    }
    if (decision === 'quit') {
      summary.unreviewed = items.length - i;
      break;
    }
    if (decision === 'skip') {
      summary.skipped++;
      io.report(`skipped: ${step.item.tag} left ${describePlace(step.item)}, file untouched`);
      continue;
    }
    const action: ItemAction = decision;
    const { item } = step;
    try {
      const result = await applyItemAction(
        {
          path: item.path,
          tag: item.tag,
          noun: item.noun,
          line: isInline(item) ? item.line : undefined,
        },
        action,
      );
      lineShift.set(item.path, (lineShift.get(item.path) ?? 0) + result.lineDelta);
      if (action === 'approve') summary.approved++;
      else if (action === 'next') summary.next++;
      else summary.dropped++;
      summary.changes.push({ path: item.path, from: item.tag, to: result.newTag });
      const verb =
        action === 'approve'
          ? 'approved'
          : action === 'next'
            ? 'picked for the next skill'
            : 'dropped';
      io.report(
        result.newTag === undefined
          ? `${verb}: ${item.tag} removed`
          : `${verb}: ${item.tag} -> ${result.newTag}`,
      );
    } catch (error) {
      if (!(error instanceof EngineError)) throw error;
      summary.notChanged++;
      io.report(`not changed: ${error.message}`);
    }
  }
  return summary;
}

/** Re-reads the item's file and finds the item there, or says why it is gone. */
async function locate(
  item: ApprovalItem,
): Promise<{ item: ApprovalItem; text: string } | { gone: string }> {
  let text: string;
  try {
    ({ text } = (await readTextFile(item.path)).file);
  } catch (error) {
    if (!(error instanceof EngineError)) throw error;
    return { gone: `not changed: ${error.message}` };
  }
  const scan = scanTags(text);
  const found = isInline(item)
    ? scan.occurrences.find(
        (o) => o.place === 'prose' && o.line === item.line && o.tag === item.tag,
      )
    : carrierTags(scan).find((o) => o.tag === item.tag);
  if (!found) {
    return {
      gone: `not changed: ${item.tag} is no longer ${describePlace(item)} of ${item.path} (changed since the list was made)`,
    };
  }
  return {
    item: {
      ...item,
      title: titleOf(text, item.path),
      line: found.line,
      column: found.column,
      place: found.place,
    },
    text,
  };
}

/** The counts on one line, then each change written (file: from -> to), or that none was. */
export function formatSummary(summary: ReviewSummary): string {
  const parts = [
    `approved ${summary.approved}`,
    `next skill ${summary.next}`,
    `skipped ${summary.skipped}`,
    `dropped ${summary.dropped}`,
  ];
  if (summary.notChanged > 0) parts.push(`not changed ${summary.notChanged}`);
  if (summary.unreviewed > 0) parts.push(`not reviewed ${summary.unreviewed}`);
  const changes = summary.changes.map(
    ({ path, from, to }) => `  ${path}: ${from} -> ${to ?? '(removed)'}`,
  );
  const tail = changes.length === 0 ? ['No file changed.'] : ['Changed:', ...changes];
  return [parts.join(', '), ...tail].join('\n');
}
