/** The notification stand-in (fixtures/notify-log.mjs): a command that appends its argv as JSON. */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { shellQuote } from './daemon-harness.js';

export const NOTIFY_LOG = fileURLToPath(new URL('../fixtures/notify-log.mjs', import.meta.url));

/** The argv of each call the stand-in logged to `out`, in order; none before the first. */
export function loggedCalls(out: string): string[][] {
  return existsSync(out)
    ? readFileSync(out, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as string[])
    : [];
}

/** An `--on-event` template that logs `placeholders` (such as `{event} {file}`) to `out`. */
export function notifyLogTemplate(out: string, placeholders: string): string {
  return `${shellQuote(process.execPath)} ${shellQuote(NOTIFY_LOG)} ${shellQuote(out)} ${placeholders}`;
}
