/**
 * The names the board gives its items: an opaque random id per (file, noun), made the first time
 * the item is shown and kept while the server runs. A request names an item only by such an id,
 * never by a path: an id the table did not make names nothing.
 */
import { randomBytes } from 'node:crypto';

export interface ItemRef {
  /** The request file's real path. */
  file: string;
  noun: string;
}

const ID = /^[0-9a-f]{16}$/;

export class ItemIds {
  private readonly byKey = new Map<string, string>();
  private readonly byId = new Map<string, ItemRef>();

  /** The item's id, made on first use. */
  idOf(file: string, noun: string): string {
    const key = `${file}\0${noun}`;
    const known = this.byKey.get(key);
    if (known !== undefined) return known;
    const id = randomBytes(8).toString('hex');
    this.byKey.set(key, id);
    this.byId.set(id, { file, noun });
    return id;
  }

  /** The item an id names; null for anything the table did not make. */
  itemOf(id: string): ItemRef | null {
    return ID.test(id) ? (this.byId.get(id) ?? null) : null;
  }
}
