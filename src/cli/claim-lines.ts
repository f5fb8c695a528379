/** A claim of the shared remote as text, for `engine claims list` and `engine status`. */
import type { ClaimView } from '../claims/claims-view.js';
import { duration, relativeTime, wrap } from './fit-width.js';
import { oneLine } from './logger.js';

/**
 * What a claim's record says, on one line; its renewal's age labelled as the record's. Its text
 * fields were written by another host: a control character or line break in them is shown as
 * such (oneLine), never sent to the terminal.
 */
export function claimText(v: ClaimView, now: Date): string {
  if (v.state === 'unreadable') return 'a record engine cannot read (another version of engine?)';
  const h = v.holder!;
  const renewed = `renewed ${relativeTime(v.renewedAt!, now)} by the record's clock`;
  const by = `${oneLine(h.host)} (instance ${oneLine(h.instance)}, boot ${oneLine(h.boot)})`;
  return `${v.state}, attempt ${v.attempt}, by ${by}; lease ${duration(v.leaseMs!)}; ${renewed}`;
}

/** The claim's item, file and noun as shown (as claimText's fields). */
export function claimNames(v: ClaimView): { item: string; file: string; noun: string } {
  return { item: oneLine(v.item), file: oneLine(v.file ?? '?'), noun: oneLine(v.noun ?? '?') };
}

/** Each claim: its item, file and noun, then what its record says. */
export function claimViewLines(views: readonly ClaimView[], now: Date): string[] {
  return views.flatMap((v) => {
    const { item, file, noun } = claimNames(v);
    return [
      ...wrap(`${item}  ${file}  #${noun}`, '  ', '    '),
      ...wrap(claimText(v, now), '    ', '    '),
    ];
  });
}
