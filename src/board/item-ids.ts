/**
 * The names the board gives its items: an opaque random id per item, made the first time the
 * item is shown and kept while the server runs. An item is a (file, noun) and, for a `#needs-X`
 * card, the one occurrence it shows (its tag, and its line when inline): a file may carry a
 * Tags-line `#needs-fix` and several inline ones, each its own card that approves itself only. A
 * request names an item only by such an id, never by a path: an id the table did not make names
 * nothing.
 */
import { randomBytes } from 'node:crypto';

/** The `#needs-X` occurrence a card approves or picks, and nothing else. */
export interface ApprovalPlace {
  tag: string;
  /** The line of an inline tag; null for the Tags line or front matter. */
  line: number | null;
  /** That inline line's text as the card showed it (the edit checks it); null when not inline. */
  lineText: string | null;
}

export interface ItemRef {
  /** The request file's real path. */
  file: string;
  noun: string;
  /** For a card offering approve or pick: what it changes. */
  approval: ApprovalPlace | null;
}

const ID = /^[0-9a-f]{16}$/;

export class ItemIds {
  private readonly byKey = new Map<string, string>();
  private readonly byId = new Map<string, ItemRef>();

  /** The item's id, made on first use. */
  idOf(item: ItemRef): string {
    const { file, noun, approval } = item;
    const key = JSON.stringify([
      file,
      noun,
      approval?.tag ?? null,
      approval?.line ?? null,
      approval?.lineText ?? null,
    ]);
    const known = this.byKey.get(key);
    if (known !== undefined) return known;
    const id = randomBytes(8).toString('hex');
    this.byKey.set(key, id);
    this.byId.set(id, { file, noun, approval: approval && { ...approval } });
    return id;
  }

  /** The item an id names; null for anything the table did not make. */
  itemOf(id: string): ItemRef | null {
    return ID.test(id) ? (this.byId.get(id) ?? null) : null;
  }
}
