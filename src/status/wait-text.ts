/**
 * How `engine status`, `engine run --dry-run` and the board say why a waiting item is not claimed yet
 * (status/wait-reasons.ts): the same words in both, times relative to `now`.
 */
import { blockerText } from '../dispatch/depends-on.js';
import type { WaitReason } from './wait-reasons.js';
import { relativeTime } from './relative-time.js';

export function waitText(wait: WaitReason, now: Date): string {
  const at = (iso: string) => relativeTime(iso, now);
  switch (wait.kind) {
    case 'quiet':
      return `written just now: ready ${at(wait.until)}`;
    case 'not-before':
      return `a retry's backoff: ready ${at(wait.until)}`;
    case 'claim':
      return `after ${wait.tag} in the same file ends: one claim per file`;
    case 'noun-max':
      return `${wait.noun} is at its Max in §TAG_DISPATCH: ${wait.running} of ${wait.max} running`;
    case 'agents':
      return `all agents busy: ${wait.running} of --max-agents ${wait.max} running`;
    case 'blocked':
      return wait.by.map(blockerText).join('; ');
    case 'paused':
      return wait.until === null
        ? 'paused by a usage limit until its probe is judged'
        : `paused by a usage limit, lifts ${at(wait.until)}`;
  }
}
