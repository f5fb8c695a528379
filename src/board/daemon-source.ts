/**
 * The board's report from the project's running daemon (its control socket), with the files as
 * the fallback: when no daemon runs, when it cannot answer (null), and once its connection has
 * closed (it stopped). A daemon started later is found again: at once on a change the board's
 * watch sees (its lock is written), else within RETRY_MS. The file source's watch stays open
 * either way: the daemon's change stream hears of a session's state only when the session
 * directories lie under its watched paths, and the board must show an agent that waits for input
 * within a second. Its notices and the daemon's are gathered into one word per burst.
 */
import type { DaemonClient, StatusQuery } from '../control/control-client.js';
import { coalesce, type BoardSource, type SourcedReport } from './board-source.js';

/** How often a daemon is looked for while none answers. */
export const RETRY_MS = 3000;

export interface DaemonSourceOptions {
  /** The file source: the fallback, and the watch. */
  files: BoardSource;
  /** A client of the project's daemon, or null when none answers. */
  connect: () => Promise<DaemonClient | null>;
  /** The status query of this moment: the paths, the table, the settings and the clock. */
  query: () => Promise<StatusQuery>;
  retryMs?: number;
}

export type DaemonBoardSource = BoardSource & {
  /** Says "changed" (with the next burst), for what the board learns of on its own. */
  poke(): void;
};

export function daemonBoardSource(options: DaemonSourceOptions): DaemonBoardSource {
  const source = new DaemonSource(options);
  return {
    report: () => source.report(),
    subscribe: (onChange) => source.subscribe(onChange),
    close: () => source.close(),
    poke: () => source.burst.poke(),
  };
}

class DaemonSource {
  private client: DaemonClient | null = null;
  private connecting: Promise<DaemonClient | null> | null = null;
  private closed = false;
  private readonly listeners = new Set<() => void>();
  readonly burst = coalesce(() => this.listeners.forEach((listener) => listener()));
  private readonly unsubscribe: () => void;
  private readonly retry: NodeJS.Timeout;

  constructor(private readonly options: DaemonSourceOptions) {
    this.unsubscribe = options.files.subscribe(() => {
      this.burst.poke();
      void this.connect();
    });
    this.retry = setInterval(() => void this.connect(), options.retryMs ?? RETRY_MS);
    this.retry.unref();
  }

  async report(): Promise<SourcedReport> {
    const client = this.client ?? (await this.connect());
    // A daemon that cannot answer now (its index still building, say) may answer the next time.
    const report = client && (await client.status(await this.options.query()));
    return report ? { report, from: 'daemon' } : this.options.files.report();
  }

  subscribe(onChange: () => void): () => void {
    this.listeners.add(onChange);
    return () => this.listeners.delete(onChange);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.retry);
    this.burst.stop();
    this.unsubscribe();
    this.listeners.clear();
    (await this.connecting)?.close();
    this.client?.close();
    await this.options.files.close();
  }

  /** The daemon's client, connected once at a time; a new one says "changed" (a new origin). */
  private connect(): Promise<DaemonClient | null> {
    if (this.client || this.closed) return Promise.resolve(this.client);
    this.connecting ??= this.options.connect().then((client) => {
      this.connecting = null;
      if (client === null || this.closed) {
        client?.close();
        return null;
      }
      this.client = client;
      client.subscribe(() => this.burst.poke());
      void client.closed.then(() => {
        // The daemon stopped: the files answer from the next report on.
        if (this.client === client) this.client = null;
        if (!this.closed) this.burst.poke();
      });
      this.burst.poke();
      return client;
    });
    return this.connecting;
  }
}
