/**
 * `engine retry`: a human's approval, taking effect now. A `#needs-X` item (given up on, cancelled,
 * or never approved) goes to `#delegated-X`; a `#delegated-X` item that a retry's Not Before still
 * holds stays so. Either way, an item with Recovery entries gets one more, the retry's (failure
 * `none`, no Not Before): the readiness rule reads the last entry's Not Before, so no backoff
 * holds it any more, and the daemon claims it as soon as it is quiet and a slot is free. A pure
 * edit through the compare-and-swap writer: the file alone says the item is ready.
 */
import { EngineError } from '../errors.js';
import { editFile } from '../files/tag-file.js';
import { retryNotBefore } from '../dispatch/work-order.js';
import { retryEdit } from '../tags/lifecycle-edits.js';
import { recoveryRecords } from '../tags/recovery-entries.js';
import { lifecycleTag, transitionTags } from '../tags/tag-name.js';
import type { ActionContext } from './action-context.js';
import { pickItem, readItemFile } from './item-of.js';

export interface Retried {
  file: string;
  noun: string;
  /** The tag it carried: `#needs-X`, or `#delegated-X` held by a Not Before. */
  from: string;
  to: string;
  /** The Not Before that held it, cleared (ISO time); null when none did. */
  heldUntil: string | null;
}

export async function retryItem(
  ctx: ActionContext,
  file: string,
  noun: string | undefined,
): Promise<Retried> {
  const item = await readItemFile(file);
  const life = pickItem(
    item,
    ['needs', 'delegated'],
    noun,
    "only an item that waits for a human (#needs-X) or for a retry's Not Before (#delegated-X) is retried",
  );
  const stays = life.state === 'delegated';
  let heldUntil: Date | null = null;
  await editFile(file, (text) => {
    const now = ctx.now();
    heldUntil = heldNow(text, now);
    if (stays && heldUntil === null) throw notHeld(file, text, life.noun);
    return retryEdit(text, life.noun, now, stays);
  });
  const held = heldUntil as Date | null;
  const retried: Retried = {
    file: item.path,
    noun: life.noun,
    from: lifecycleTag(life.state, life.noun),
    to: transitionTags('retry', life.noun).to,
    heldUntil: held?.toISOString() ?? null,
  };
  await ctx.recordEvent({ event: 'retried', reason: 'retried by hand (engine retry)', ...retried });
  return retried;
}

/** The retry's Not Before that holds the item at `now`, from its last Recovery entry; or null. */
function heldNow(text: string, now: Date): Date | null {
  const last = recoveryRecords(text).at(-1);
  const notBefore = retryNotBefore(last);
  return notBefore !== null && notBefore.getTime() > now.getTime() ? notBefore : null;
}

/** A `#delegated-X` item that no Not Before holds: there is nothing to retry. */
function notHeld(file: string, text: string, noun: string): EngineError {
  const limited = recoveryRecords(text).at(-1)?.failure === 'usage-limit';
  return new EngineError(
    limited
      ? `${file} is #delegated-${noun} and waits for the queue-wide pause of a usage limit, not for a backoff: engine resume lifts the pause`
      : `${file} is #delegated-${noun} already and no retry's Not Before holds it: the daemon claims it once a slot is free (engine status says why it waits)`,
  );
}
