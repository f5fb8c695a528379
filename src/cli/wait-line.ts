/**
 * How `engine status` and `engine run --dry-run` show what a waiting item waits for before the
 * daemon may claim it (dispatch/work-order.ts): the same words in both.
 */
import type { Wait } from '../dispatch/work-order.js';

export function waitText(wait: Wait | null): string {
  if (wait === null) return '';
  const at = (ms: number) => new Date(ms).toISOString();
  switch (wait.kind) {
    case 'quiet':
      return `  (written just now: ready at ${at(wait.until)})`;
    case 'not-before':
      return `  (retry not before ${at(wait.until)})`;
    case 'claim':
      return `  (after ${wait.tag} in the same file ends: one claim per file)`;
  }
}
