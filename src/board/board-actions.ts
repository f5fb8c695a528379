/**
 * The board's actions, each the CLI's own: approve and pick (approve/approve-edits, as `engine tag
 * approve` makes them), cancel, retry and close (actions/), and lifting the pause (`engine
 * resume`). Each reads the file again and writes through the same compare-and-swap as the CLI,
 * so a card older than the file changes nothing; the answer says what was done, or why not.
 */
import { approvalItemsIn } from '../approve/approval-items.js';
import { applyItemAction } from '../approve/approve-edits.js';
import type { ActionContext } from '../actions/action-context.js';
import { cancelItem } from '../actions/cancel-item.js';
import { closeItem } from '../actions/close-item.js';
import { retryItem } from '../actions/retry-item.js';
import { messageOf } from '../errors.js';
import { readRequestFile } from '../files/read-text-file.js';
import { removePause } from '../sessions/limit-pause.js';
import { scanTags } from '../tags/scan-tags.js';
import type { ActionName } from './board-view.js';
import type { ItemRef } from './item-ids.js';

export interface ActionAnswer {
  ok: boolean;
  /** What was done, or why nothing was. */
  message: string;
}

/** Runs `action` on the item; never throws: a refusal is an answer. */
export async function runAction(
  ctx: ActionContext,
  item: ItemRef,
  action: ActionName,
): Promise<ActionAnswer> {
  try {
    return { ok: true, message: await act(ctx, item, action) };
  } catch (error) {
    return { ok: false, message: messageOf(error) };
  }
}

async function act(ctx: ActionContext, { file, noun }: ItemRef, action: ActionName) {
  switch (action) {
    case 'approve':
    case 'next':
      return approve(file, noun, action);
    case 'cancel': {
      const done = await cancelItem(ctx, file, noun);
      const how =
        done.ended === 'gone' ? 'no agent was running' : `its agent ended (${done.ended})`;
      return `Cancelled: ${how}; it is ${done.to} now`;
    }
    case 'retry': {
      const done = await retryItem(ctx, file, noun);
      return `Retried: ${done.from} -> ${done.to}, claimed as soon as a daemon may`;
    }
    case 'close': {
      const done = await closeItem(ctx, file, noun);
      return `Closed its agent (pid ${done.agentPid})`;
    }
  }
}

/** The item's `#needs-X` as the file carries it now (the Tags line first), swapped in one write. */
async function approve(file: string, noun: string, action: 'approve' | 'next'): Promise<string> {
  const read = readRequestFile(file);
  if (read.kind !== 'text') throw new Error(`${file} cannot be read now (${read.kind})`);
  const { text } = read.file;
  const items = approvalItemsIn(file, text, scanTags(text).occurrences).filter(
    (i) => i.noun === noun,
  );
  const item = items.find((i) => i.place !== 'prose') ?? items[0];
  if (item === undefined) throw new Error(`${file} carries no #needs-${noun} now: nothing changed`);
  const line = item.place === 'prose' ? item.line : undefined;
  const done = await applyItemAction({ path: file, tag: item.tag, noun, line }, action);
  return `${item.tag} -> ${String(done.newTag)}`;
}

/** `engine resume`: lifts the usage-limit pause. */
export async function resumeQueue(root: string): Promise<ActionAnswer> {
  try {
    const lifted = await removePause(root);
    return lifted === null
      ? { ok: false, message: 'The queue is not paused.' }
      : { ok: true, message: `Lifted the pause until ${lifted.until} (${lifted.reason}).` };
  } catch (error) {
    return { ok: false, message: messageOf(error) };
  }
}
