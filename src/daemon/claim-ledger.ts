/**
 * What the daemon knows about items between the files' truths, in memory only: items queued or
 * being claimed, claims this process watches, approvals held until a claim ends, and the claims
 * files are known to carry (for the reaper). Lost on a restart by design: the files say it again.
 */
type Key = string;

const keyOf = (file: string, noun: string): Key => `${file}\0${noun}`;

export class ClaimLedger {
  /** Queued or being claimed, so that a burst of saves queues one dispatch. */
  private readonly queued = new Set<Key>();
  /** Claims this process watches until they end (dispatched here or adopted). */
  private readonly watched = new Set<Key>();
  /**
   * Watched items whose file showed the item approved again while its claim was ending: the file
   * is read again once the claim has ended, since no further change may come to settle it.
   */
  private readonly held = new Set<Key>();
  /** Files known to carry a claim, and its nouns. */
  private readonly claims = new Map<string, Set<string>>();

  isQueued(file: string, noun: string): boolean {
    return this.queued.has(keyOf(file, noun));
  }

  /** Before the first await of an evaluation, so an overlapping one cannot queue it twice. */
  queue(file: string, noun: string): void {
    this.queued.add(keyOf(file, noun));
  }

  unqueue(file: string, noun: string): void {
    this.queued.delete(keyOf(file, noun));
  }

  isWatched(file: string, noun: string): boolean {
    return this.watched.has(keyOf(file, noun));
  }

  /** How many claims are watched: each holds an agent's slot. */
  get watchedCount(): number {
    return this.watched.size;
  }

  /** The noun of each watched claim. */
  watchedNouns(): string[] {
    return [...this.watched].map((key) => key.slice(key.indexOf('\0') + 1));
  }

  watch(file: string, noun: string): void {
    this.watched.add(keyOf(file, noun));
  }

  /** The claim's watch is over. True when an approval was held meanwhile: read the file again. */
  unwatch(file: string, noun: string): boolean {
    const key = keyOf(file, noun);
    this.watched.delete(key);
    return this.held.delete(key);
  }

  hold(file: string, noun: string): void {
    this.held.add(keyOf(file, noun));
  }

  /** The nouns a file claims as it was just read (none: the file is forgotten). */
  setClaims(file: string, nouns: Iterable<string>): void {
    const set = new Set(nouns);
    if (set.size > 0) this.claims.set(file, set);
    else this.claims.delete(file);
  }

  /** The claim ended: the reaper no longer looks at it (a new one is seen when the file changes). */
  forgetClaim(file: string, noun: string): void {
    const nouns = this.claims.get(file);
    nouns?.delete(noun);
    if (nouns?.size === 0) this.claims.delete(file);
  }

  hasClaim(file: string, noun: string): boolean {
    return this.claims.get(file)?.has(noun) ?? false;
  }

  /** Every known claim, as a list taken now (the reaper awaits between them). */
  knownClaims(): Array<{ file: string; noun: string }> {
    return [...this.claims].flatMap(([file, nouns]) => [...nouns].map((noun) => ({ file, noun })));
  }
}
