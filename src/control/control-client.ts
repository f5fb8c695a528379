/**
 * The client of a root's control socket: what `engine status`, `engine tag find` and the board
 * ask a running daemon. Every failure (no daemon, a stale socket, another engine version, a
 * refusal, a timeout) comes back as null: the caller then reads the files, as without a daemon.
 * Loads nothing but node's own modules, for the CLI's lean path.
 */
import { lstatSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { dirname } from 'node:path';
import {
  CONTROL_VERSION,
  controlSocketPath,
  type Answer,
  type FindAnswer,
  type FindQuery,
  type Request,
  type StatusAnswer,
  type StatusQuery,
  type StatusTextAnswer,
  type StatusTextQuery,
} from './protocol.js';

export type {
  FindAnswer,
  FindQuery,
  GivenPath,
  StatusAnswer,
  StatusQuery,
  StatusTextAnswer,
  StatusTextQuery,
} from './protocol.js';

export interface DaemonClient {
  /** `engine status`'s report, computed by the daemon; null: read the files. */
  status(query: StatusQuery): Promise<StatusAnswer | null>;
  /** `engine status`'s printed text, rendered by the daemon; null: read the files. */
  statusText(query: StatusTextQuery): Promise<StatusTextAnswer | null>;
  /** `engine tag find`'s answer from the live index; null: read the files. */
  find(query: FindQuery): Promise<FindAnswer | null>;
  /** Calls `onChange` after each change the daemon sees (coalesced); returns the unsubscribe. */
  subscribe(onChange: () => void): () => void;
  /** Resolves when the connection has ended (the daemon stopped, or close()). */
  readonly closed: Promise<void>;
  close(): void;
}

export interface ConnectOptions {
  /** The version named in `hello` (tests: another engine's). */
  version?: string;
  /** The deadline of a status answer (a find's is at most FIND_TIMEOUT_MS). */
  timeoutMs?: number;
}

/**
 * The deadline of the connection and of `hello`: a daemon that is there and running answers at
 * once; a stopped one (SIGSTOP) still accepts connections, and must not hold the CLI.
 */
export const HELLO_TIMEOUT_MS = 2000;
/** A find waits for the index (2 s) and a sync (2 s) at most, then reads a few files. */
const FIND_TIMEOUT_MS = 10_000;

type Request0 = Request extends infer R
  ? R extends { id: number }
    ? Omit<R, 'id'>
    : never
  : never;

/** A client of the daemon of `root`, or null when none answers (then read the files). */
export async function connectDaemon(
  root: string,
  options: ConnectOptions = {},
): Promise<DaemonClient | null> {
  // Long enough for a first status over a large tree; a daemon that is there answers at all.
  const timeoutMs = options.timeoutMs ?? 60_000;
  const path = controlSocketPath(root);
  if (!isOwnSocket(path)) return null;
  const socket = await open(path, Math.min(timeoutMs, HELLO_TIMEOUT_MS));
  if (!socket) return null;
  const client = new Client(socket, timeoutMs);
  const hello = await client.ask(
    { op: 'hello', version: options.version ?? CONTROL_VERSION },
    Math.min(timeoutMs, HELLO_TIMEOUT_MS),
  );
  if (hello === null) {
    client.close();
    return null;
  }
  return client;
}

/**
 * Whether the socket is the one a daemon of this user made (control-server.ts prepare): in a
 * directory of ours that no one else may enter, itself ours. Anyone else's socket at the path
 * could answer anything.
 */
function isOwnSocket(path: string): boolean {
  const uid = process.getuid?.();
  try {
    const dir = lstatSync(dirname(path));
    const socket = lstatSync(path);
    return (
      dir.isDirectory() &&
      dir.uid === uid &&
      (dir.mode & 0o077) === 0 &&
      socket.isSocket() &&
      socket.uid === uid
    );
  } catch {
    return false;
  }
}

function open(path: string, timeoutMs: number): Promise<Socket | null> {
  return new Promise((resolve) => {
    const socket = connect(path);
    const timer = setTimeout(() => fail(), timeoutMs);
    const fail = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(null);
    };
    socket.once('error', fail);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.off('error', fail);
      resolve(socket);
    });
  });
}

class Client implements DaemonClient {
  private nextId = 0;
  private readonly pending = new Map<number, (answer: Answer | null) => void>();
  private readonly listeners = new Set<() => void>();
  /** The line being received, in pieces. */
  private pieces: string[] = [];
  readonly closed: Promise<void>;

  constructor(
    private readonly socket: Socket,
    private readonly timeoutMs: number,
  ) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.receive(chunk));
    socket.on('error', () => socket.destroy());
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        for (const settle of this.pending.values()) settle(null);
        this.pending.clear();
        resolve();
      }),
    );
  }

  async status(query: StatusQuery): Promise<StatusAnswer | null> {
    return (await this.ask({ op: 'status', ...query })) as StatusAnswer | null;
  }

  async statusText(query: StatusTextQuery): Promise<StatusTextAnswer | null> {
    const text = await this.ask({ op: 'status-text', ...query });
    return typeof text === 'string' ? text : null;
  }

  async find(query: FindQuery): Promise<FindAnswer | null> {
    const deadline = Math.min(this.timeoutMs, FIND_TIMEOUT_MS);
    return (await this.ask({ op: 'find', ...query }, deadline)) as FindAnswer | null;
  }

  subscribe(onChange: () => void): () => void {
    if (this.listeners.size === 0) void this.ask({ op: 'subscribe' }, null);
    this.listeners.add(onChange);
    return () => this.listeners.delete(onChange);
  }

  close(): void {
    this.socket.destroy();
  }

  /** The result of one request, or null when the daemon does not give one within `deadlineMs`. */
  ask(request: Request0, deadlineMs: number | null = this.timeoutMs): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = deadlineMs === null ? undefined : setTimeout(() => settle(null), deadlineMs);
      const settle = (answer: Answer | null): void => {
        clearTimeout(timer);
        this.pending.delete(id);
        resolve(answer?.ok ? answer.result : null);
      };
      this.pending.set(id, settle);
      if (this.socket.destroyed) return settle(null);
      this.socket.write(`${JSON.stringify({ ...request, id })}\n`);
    });
  }

  /**
   * Only the new chunk is searched for the line's end: a status answer of several MB comes in
   * hundreds of chunks, and searching (and re-joining) the whole buffer each time cost a quarter
   * of a second at 50,000 files.
   */
  private receive(chunk: string): void {
    for (let end = chunk.indexOf('\n'); end >= 0; end = chunk.indexOf('\n')) {
      this.pieces.push(chunk.slice(0, end));
      const line = this.pieces.join('');
      this.pieces = [];
      chunk = chunk.slice(end + 1);
      let message: Answer | { event: string };
      try {
        message = JSON.parse(line) as Answer | { event: string };
      } catch {
        this.socket.destroy();
        return;
      }
      if ('event' in message) this.listeners.forEach((listener) => listener());
      else this.pending.get(message.id)?.(message);
    }
    if (chunk !== '') this.pieces.push(chunk);
  }
}
