/**
 * The board's section of every host's claims (many hosts, `"claims": "git"`): the report's
 * `hosts` (status/hosts-claims.ts, the same data `engine status` shows) as rows a person reads.
 * Pure. Like status it never says "expired": one fetch cannot judge that, so each row gives the
 * renewal's age by the record's own clock, labelled so, and the section the fetch's time.
 */
import type { HostsClaims } from '../status/collect-status.js';
import { duration, relativeTime } from '../status/relative-time.js';

export interface HostClaimRow {
  host: string;
  item: string;
  file: string;
  noun: string;
  /** `held`, `done`, `released`, or `unreadable` (another version's record). */
  state: string;
  attempt: string;
  lease: string;
  /** e.g. `12 s ago by the record's clock`. */
  renewed: string;
}

export interface HostsSection {
  title: string;
  /** When the claims were fetched, in words. */
  fetched: string;
  /** Why no claims can be shown; else null. */
  error: string | null;
  claims: HostClaimRow[];
}

export function hostsSection(hosts: HostsClaims, now: Date): HostsSection {
  const on = `Claims of every host on remote "${hosts.remote}"`;
  const fetched =
    hosts.fetchedAt === null
      ? 'fetch time unknown'
      : `fetched ${relativeTime(hosts.fetchedAt, now)} (${hosts.fetchedAt})`;
  return {
    title: hosts.error === null ? `${on} (${hosts.claims.length})` : on,
    fetched,
    error: hosts.error,
    claims: hosts.claims.map((v) => ({
      host: v.holder?.host ?? '?',
      item: v.item,
      file: v.file ?? '?',
      noun: v.noun ?? '?',
      state: v.state,
      attempt: v.attempt === null ? '?' : String(v.attempt),
      lease: v.leaseMs === null ? '?' : duration(v.leaseMs),
      renewed:
        v.renewedAt === null ? '?' : `${relativeTime(v.renewedAt, now)} by the record's clock`,
    })),
  };
}
