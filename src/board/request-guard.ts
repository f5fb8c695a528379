/**
 * The board's checks of a request, pure: the address it may bind, the Host a request must name
 * (a DNS-rebound name reaches 127.0.0.1 with its own Host), the bearer token, compared in constant
 * time, and the Origin a write must come from.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** The loopback addresses the board binds: `localhost` binds 127.0.0.1. */
export function bindAddress(host: string): string | null {
  if (host === 'localhost' || host === '127.0.0.1') return '127.0.0.1';
  if (host === '::1' || host === '[::1]') return '::1';
  return null;
}

/** The page's own origin, as the browser names it: the address the board is bound to. */
export function originOf(address: string, port: number): string {
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
}

/** The Host header a request may carry: a loopback name with the board's port, exactly. */
export function isAllowedHost(host: string | undefined, port: number): boolean {
  return ['localhost', '127.0.0.1', '[::1]'].some((name) => host === `${name}:${port}`);
}

/** `Authorization: Bearer <token>`, compared without leaking its length or its prefix. */
export function hasToken(authorization: string | undefined, token: string): boolean {
  const given = /^Bearer ([^\s]+)$/.exec(authorization ?? '')?.[1];
  if (given === undefined) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(token));
}

/** A write comes from the page: its Origin is the origin of the Host it was sent to. */
export function isSameOrigin(origin: string | undefined, host: string): boolean {
  return origin !== undefined && origin === `http://${host}`;
}
