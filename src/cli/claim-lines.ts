/** A claim of the shared remote as text, for `engine claims list` and `engine status`. */
import type { ClaimView } from '../claims/claims-view.js';
import { duration, relativeTime, wrap } from './fit-width.js';

/** What a claim's record says, on one line; its renewal's age labelled as the record's. */
export function claimText(v: ClaimView, now: Date): string {
  if (v.state === 'unreadable') return 'a record engine cannot read (another version of engine?)';
  const h = v.holder!;
  const renewed = `renewed ${relativeTime(v.renewedAt!, now)} by the record's clock`;
  return `${v.state}, attempt ${v.attempt}, by ${h.host} (instance ${h.instance}, boot ${h.boot}); lease ${duration(v.leaseMs!)}; ${renewed}`;
}

/** Each claim: its item, file and noun, then what its record says. */
export function claimViewLines(views: readonly ClaimView[], now: Date): string[] {
  return views.flatMap((v) => [
    ...wrap(`${v.item}  ${v.file ?? '?'}  #${v.noun ?? '?'}`, '  ', '    '),
    ...wrap(claimText(v, now), '    ', '    '),
  ]);
}
