/**
 * The item a command acts on: a request file, read by the one reader, and one noun's lifecycle
 * state on its Tags line or front matter (where an item's state lives), picked by `--noun` when the
 * file carries several.
 */
import { realpath } from 'node:fs/promises';
import { EngineError } from '../errors.js';
import { readTextFile } from '../files/read-text-file.js';
import { carrierTags } from '../tags/edit-tags.js';
import { scanTags } from '../tags/scan-tags.js';
import { lifecycleOf, type Lifecycle, type LifecycleState } from '../tags/tag-name.js';

export interface ItemFile {
  /** As given on the command line, for messages. */
  file: string;
  /** The real path, as session records and events name it. */
  path: string;
  text: string;
}

export async function readItemFile(file: string): Promise<ItemFile> {
  const { file: read } = await readTextFile(file);
  return { file, path: await realpath(file), text: read.text };
}

/** The lifecycle states of the file's items, one per noun (`#done-fix`, `#claimed-docs`). */
export function itemsOf(text: string): Lifecycle[] {
  return carrierTags(scanTags(text))
    .map((o) => lifecycleOf(o.tag))
    .filter((life): life is Lifecycle => life !== null);
}

/**
 * The file's item in one of `states`: the one of `noun` when given, else the only one there is.
 * An error says what the file carries instead (`what`: why that state is needed).
 */
export function pickItem(
  item: ItemFile,
  states: readonly LifecycleState[],
  noun: string | undefined,
  what: string,
): Lifecycle {
  const all = itemsOf(item.text);
  const found = all.filter(
    (life) => states.includes(life.state) && (noun === undefined || life.noun === noun),
  );
  const wanted = states.map((state) => `#${state}-${noun ?? '*'}`).join(' or ');
  const has =
    all.length === 0 ? 'no lifecycle tag' : all.map((l) => `#${l.state}-${l.noun}`).join(' ');
  if (found.length === 0)
    throw new EngineError(
      `${item.file} carries ${has} on its Tags line or front matter, not ${wanted}: ${what}`,
    );
  if (found.length > 1)
    throw new EngineError(
      `${item.file} carries ${found.map((l) => `#${l.state}-${l.noun}`).join(' ')}: name one with --noun`,
    );
  return found[0] as Lifecycle;
}
