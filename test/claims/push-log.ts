/**
 * The pushes a bare remote receives, counted by the remote itself: a pre-receive hook appends a
 * line for every push that reached it with ref updates (landed or not), a post-receive hook one
 * per ref each landed push moved, with the new commit's subject for a branch. Times are the
 * server's, in milliseconds. For the many-hosts figures (docs/RELIABILITY.md, "Many hosts").
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A push that reached the remote: when, and the refs it asked to move. */
export interface Push {
  at: number;
  refs: string[];
}

/** A ref a push moved: when, which, and (a branch) the subject of its new commit. */
export interface Landed {
  at: number;
  ref: string;
  subject: string;
}

const PRE = (log: string) => `#!/bin/sh
refs=$(cut -d' ' -f3 | tr '\\n' ' ')
printf 'pre %s %s\\n' "$(date +%s%3N)" "$refs" >> '${log}'
`;

const POST = (log: string) => `#!/bin/sh
now=$(date +%s%3N)
while read old new ref; do
  subject=''
  case "$ref" in refs/heads/*) [ "$new" = 0000000000000000000000000000000000000000 ] || subject=$(git log -1 --format=%s "$new");; esac
  printf 'post %s %s %s\\n' "$now" "$ref" "$subject" >> '${log}'
done
`;

/** Installs the hooks in `bare`; returns the log's path. */
export function logPushes(bare: string): string {
  const log = join(bare, 'pushes.log');
  writeFileSync(log, '');
  for (const [name, text] of [
    ['pre-receive', PRE(log)],
    ['post-receive', POST(log)],
  ] as const) {
    const hook = join(bare, 'hooks', name);
    writeFileSync(hook, text);
    chmodSync(hook, 0o755);
  }
  return log;
}

/** The log read: every push that reached the remote, and every ref landed pushes moved. */
export function pushesOf(log: string): { tried: Push[]; landed: Landed[] } {
  const tried: Push[] = [];
  const landed: Landed[] = [];
  const lines = existsSync(log) ? readFileSync(log, 'utf8').split('\n') : [];
  for (const line of lines) {
    const [kind, at, ...rest] = line.split(' ');
    if (kind === 'pre') tried.push({ at: Number(at), refs: rest.filter(Boolean) });
    if (kind === 'post')
      landed.push({ at: Number(at), ref: rest[0]!, subject: rest.slice(1).join(' ') });
  }
  return { tried, landed };
}

/** The `q` quantile (0..1) of `values`, by the nearest rank; NaN for none. */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}
