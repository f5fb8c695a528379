/**
 * What a card says of its request besides the item table: its title, its priority band and the
 * requests it depends on, read from the file as it is now (through the one reader and locator).
 */
import { titleOf } from '../approve/approval-items.js';
import { weightOf } from '../dispatch/work-order.js';
import { readRequestFile } from '../files/read-text-file.js';
import { dependsOnOf } from '../tags/depends-on-line.js';
import { carrierTags } from '../tags/edit-tags.js';
import { scanTags } from '../tags/scan-tags.js';

export interface CardFacts {
  title: string;
  /** `#P0`, `#P1` or the default band, as dispatch orders it (dispatch/work-order weightOf). */
  priority: number;
  /** The Depends On entries, as written. */
  dependencies: string[];
}

/** The facts of `file`; null when it cannot be read as a request now (gone, not text). */
export function readCardFacts(file: string): CardFacts | null {
  const read = readRequestFile(file);
  if (read.kind !== 'text') return null;
  const { text } = read.file;
  const scan = scanTags(text);
  return {
    title: titleOf(text, file),
    priority: weightOf(carrierTags(scan).map((o) => o.tag)),
    dependencies: dependsOnOf(scan),
  };
}
