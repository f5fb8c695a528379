/** The name a mistyped word most likely meant, for "did you mean" (commands and flags). */

/**
 * Damerau-Levenshtein distance (optimal string alignment): edits, deletions, insertions and
 * swaps of two neighbours, each one step, so `stauts` is one step from `status`.
 */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => rows[i]?.[j] ?? Infinity;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1);
      (rows[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The candidate `word` most likely meant: the first that starts with it (`stat`: status), else
 * the nearest when near enough, at most 2 steps away, 1 for a word of 3 letters or fewer (else
 * `ab` would suggest any short name); the first in `candidates` wins a tie. Null when none is.
 */
export function nearestName(word: string, candidates: readonly string[]): string | null {
  const typed = word.toLowerCase();
  if (typed.length >= 2) {
    const started = candidates.find((name) => name.toLowerCase().startsWith(typed));
    if (started !== undefined) return started;
  }
  const limit = typed.length <= 3 ? 1 : 2;
  let best: { name: string; distance: number } | null = null;
  for (const name of candidates) {
    const distance = editDistance(typed, name.toLowerCase());
    if (distance <= limit && (best === null || distance < best.distance)) best = { name, distance };
  }
  return best?.name ?? null;
}
