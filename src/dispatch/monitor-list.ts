/**
 * `--monitor-tags` values. Only `#delegated-X` ever triggers a dispatch: `#needs-X` is staging
 * that awaits human approval, `#next-X` belongs to the next skill.
 */
import { EngineError } from '../errors.js';
import { parseTagPattern } from '../tags/tag-name.js';

export const DEFAULT_MONITOR = ['#delegated-*'];

export function parseMonitorList(value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') return DEFAULT_MONITOR;
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    parseTagPattern(entry);
    if (entry.startsWith('#needs-')) {
      throw new EngineError(
        `Refusing to monitor '${entry}': #needs-X is staging and waits for human approval (¶INV_NEEDS_IS_STAGING); only #delegated-X triggers a dispatch`,
      );
    }
    if (entry.startsWith('#next-')) {
      throw new EngineError(
        `Refusing to monitor '${entry}': #next-X is claimed by the next skill, never by the daemon (¶INV_NEXT_IS_IMMEDIATE); only #delegated-X triggers a dispatch`,
      );
    }
    if (!entry.startsWith('#delegated-')) {
      throw new EngineError(
        `Refusing to monitor '${entry}': only #delegated-X tags (or globs such as '#delegated-*') trigger a dispatch`,
      );
    }
  }
  return entries;
}
