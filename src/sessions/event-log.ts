/**
 * The append-only event log, `sessions/.engine/events.jsonl`: for humans and `engine status`,
 * never for decisions about work (the daemon decides from request files and `.state.json` only).
 * It is read back only to announce nothing twice: a wait already announced, a `done` a crash
 * left between its marks (daemon/record-done.ts).
 */
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Every event the daemon records, and the item commands (`engine cancel`, `retry`, `close`). */
export const EVENT_NAMES = [
  'daemon-started',
  'daemon-stopped',
  'claimed',
  'claim-lost',
  'claim-restored',
  'request-moved',
  'request-gone',
  'spawned',
  'spawn-failed',
  'adopted',
  'exited',
  'done',
  'requeued',
  'gave-up',
  'waiting-for-input',
  'limit-paused',
  'limit-lifted',
  'agent-closing',
  'cancelled',
  'retried',
  'close-requested',
] as const;
export type EventName = (typeof EVENT_NAMES)[number];

/** An event as recorded by the daemon, before the log adds its time. */
export interface EventInput {
  event: EventName;
  file?: string;
  noun?: string;
  session?: string;
  pid?: number;
  reason?: string;
  [key: string]: unknown;
}

export interface EngineEvent extends EventInput {
  time: string;
}

export function engineStateDir(root: string): string {
  return join(root, 'sessions', '.engine');
}

export function eventLogPath(root: string): string {
  return join(engineStateDir(root), 'events.jsonl');
}

/** One `write` per line with O_APPEND, so concurrent writers never interleave within a line. */
export async function appendEvent(root: string, event: EngineEvent): Promise<void> {
  await mkdir(engineStateDir(root), { recursive: true });
  await appendFile(eventLogPath(root), `${JSON.stringify(event)}\n`);
}

export async function readEvents(root: string): Promise<EngineEvent[]> {
  const raw = await readFile(eventLogPath(root), 'utf8').catch(() => '');
  const events: EngineEvent[] = [];
  for (const line of raw.split('\n')) {
    if (!line.trim()) continue;
    try {
      events.push(JSON.parse(line) as EngineEvent);
    } catch {
      // A torn last line after a crash is expected; skip it.
    }
  }
  return events;
}
