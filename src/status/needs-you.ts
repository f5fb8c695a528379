/**
 * What needs a human, for the first list of `engine status`: agents waiting for input, items
 * waiting for approval (`#needs-X`, as `engine tag approve --list` finds them), items the daemon
 * gave up on (a `#needs-X` the last Recovery entry sent back to a human), and files that will never
 * be dispatched, with why. Pure: from one file's scan, and from the claims judged.
 */
import { LineIndex } from '../tags/line-index.js';
import { approvalItemsIn } from '../approve/approval-items.js';
import type { AgentState } from '../agents/agent-state.js';
import type { RecoveryRecord } from '../tags/recovery-entries.js';
import { looksLikeTagsLine, type TagPlace } from '../tags/scan-tags.js';
import { notDispatchedIn, type FileFindings, type NotDispatched } from './not-dispatched.js';

export type NeedsYou =
  /** A running agent asks something: the hooks' `waiting` state, with what it asks. */
  | {
      kind: 'input';
      file: string;
      noun: string;
      session: string | null;
      /** Since when it waits (ISO). */
      since: string;
      question: string | null;
    }
  /** A `#needs-X` to approve: on the Tags line or front matter, or inline in prose. */
  | {
      kind: 'approval';
      file: string;
      tag: string;
      noun: string;
      title: string;
      line: number;
      place: TagPlace;
      /** That line's text as read with the rest (the board's inline approve checks it). */
      lineText: string;
    }
  /** A `#needs-X` the daemon sent back to a human: its last Recovery entry's reason. */
  | { kind: 'given-up'; file: string; tag: string; noun: string; title: string; reason: string }
  | ({ kind: 'not-dispatched' } & NotDispatched);

/** A file's approvals, given-up items and reasons it is not dispatched. */
export function needsOfFile(
  findings: FileFindings & { lastRecovery: RecoveryRecord | undefined },
): NeedsYou[] {
  const { file, text, occurrences, lastRecovery } = findings;
  const lines = text.split(/\r?\n/);
  const index = new LineIndex(text);
  const needs: NeedsYou[] = [];
  for (const item of approvalItemsIn(file, text, occurrences)) {
    const { tag, noun, title, line, place } = item;
    // A #needs-X on a line meant as the Tags line is reported with why it is no state.
    if (place === 'prose' && looksLikeTagsLine(lines[line - 1] ?? '')) continue;
    if (place !== 'prose' && lastRecovery?.to === tag) {
      const reason = lastRecovery.reason ?? 'its Recovery entry gives no reason';
      needs.push({ kind: 'given-up', file, tag, noun, title, reason });
    } else {
      const lineText = index.lineText(line);
      needs.push({ kind: 'approval', file, tag, noun, title, line, place, lineText });
    }
  }
  for (const problem of notDispatchedIn(findings))
    needs.push({ kind: 'not-dispatched', ...problem });
  return needs;
}

/** A running agent's wait for input, from its hooks' state; null when it does not wait. */
export function inputWait(claim: {
  file: string;
  noun: string;
  session: string | null;
  agentState: AgentState | null;
}): NeedsYou | null {
  const state = claim.agentState;
  if (state?.state !== 'waiting') return null;
  const { file, noun, session } = claim;
  return { kind: 'input', file, noun, session, since: state.at, question: state.detail ?? null };
}

/** The order of the list: a waiting agent holds its slot until answered, so it comes first. */
const KIND_ORDER: ReadonlyArray<NeedsYou['kind']> = [
  'input',
  'given-up',
  'approval',
  'not-dispatched',
];

export function needsOrder(needs: readonly NeedsYou[]): NeedsYou[] {
  return [...needs].sort((a, b) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind));
}
