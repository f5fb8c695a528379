/**
 * The board's actions, each the CLI's own: approve and pick (approve/approve-edits, as `engine tag
 * approve` makes them), cancel, retry and close (actions/), and lifting the pause (`engine
 * resume`). Each reads the file again and writes through the same compare-and-swap as the CLI,
 * so a card older than the file changes nothing; the answer says what was done, or why not.
 */
import { applyItemAction } from '../approve/approve-edits.js';
import type { ActionContext } from '../actions/action-context.js';
import { cancelItem } from '../actions/cancel-item.js';
import { closeItem } from '../actions/close-item.js';
import { retryItem } from '../actions/retry-item.js';
import { messageOf } from '../errors.js';
import { removePause } from '../sessions/limit-pause.js';
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

async function act(ctx: ActionContext, item: ItemRef, action: ActionName) {
  const { file, noun } = item;
  switch (action) {
    case 'approve':
    case 'next':
      return approve(item, action);
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

/**
 * The card's own `#needs-X`, where the card saw it (its line when inline), swapped in one write:
 * never another occurrence. Gone from there, the compare-and-swap refuses and nothing changes.
 */
async function approve(item: ItemRef, action: 'approve' | 'next'): Promise<string> {
  const { file, noun, approval } = item;
  if (approval === null) throw new Error(`this card has no #needs-${noun} to approve`);
  const line = approval.line ?? undefined;
  const lineText = approval.lineText ?? undefined;
  // An inline tag is named by its line and that line's text, never by its number alone.
  if (line !== undefined && lineText === undefined)
    throw new Error(`this card does not say what line ${line} read: nothing changed`);
  const done = await applyItemAction(
    { path: file, tag: approval.tag, noun, line, lineText },
    action,
  );
  return `${approval.tag} -> ${String(done.newTag)}`;
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
