/** Times as people say them: "3 min ago", "in 12 s", for `engine status` and the board. */

/** "3 min ago", "in 12 s", "just now": `at` (an ISO time or ms) seen from `now`. */
export function relativeTime(at: string | number, now: Date): string {
  const ms = (typeof at === 'number' ? at : Date.parse(at)) - now.getTime();
  if (Math.abs(ms) < 1000) return 'just now';
  return ms < 0 ? `${duration(-ms)} ago` : `in ${duration(ms)}`;
}

/** "45 s", "3 min", "5 h", "2 d": the largest whole unit. */
export function duration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 48 * 3600) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86_400)} d`;
}
