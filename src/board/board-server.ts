/**
 * The board's HTTP server (node:http): the page, the board as JSON, a stream that says
 * "changed", and the actions. Safe by construction (docs/BOARD.md): bound to loopback only;
 * every request, streams and upgrades included, must name a loopback Host with the board's port;
 * the API needs the token made at start (a bearer header, never a cookie, so no other site's page
 * can send it); a write is a POST from the page's own origin; no CORS header is ever sent; items
 * are named by the ids of the board's own table. The token is never logged nor served.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { relative } from 'node:path';
import type { Duplex } from 'node:stream';
import type { ActionContext } from '../actions/action-context.js';
import type { LogFn } from '../daemon/daemon-context.js';
import { EngineError, messageOf } from '../errors.js';
import { resolveSessionRef } from '../sessions/session-dir.js';
import { runAction, resumeQueue, type ActionAnswer } from './board-actions.js';
import type { BoardSource } from './board-source.js';
import { ACTIONS, boardView, type ActionName, type Board } from './board-view.js';
import { readCardFacts, type CardFacts } from './card-facts.js';
import { ItemIds } from './item-ids.js';
import { loadPageFiles, type PageFile } from './page-files.js';
import { bindAddress, hasToken, isAllowedHost, isSameOrigin, originOf } from './request-guard.js';

export interface BoardServerOptions {
  root: string;
  source: BoardSource;
  /** A loopback address or `localhost`; anything else is refused. */
  host: string;
  /** 0: a free port. */
  port: number;
  readOnly: boolean;
  /** A session's transcript tail as text, by its directory; null when there is none. */
  tail: (sessionDir: string) => Promise<string | null>;
  actions: ActionContext;
  log: LogFn;
}

export interface BoardServer {
  /** The page's address with the token in its fragment: for the one who started it only. */
  url: string;
  port: number;
  close(): Promise<void>;
}

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const HEADERS = {
  'Content-Security-Policy': CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

/** A comment line on the stream this often, so a proxy or the browser keeps it open. */
const KEEPALIVE_MS = 20_000;

/**
 * The board computed is served to every tab until the next change, and at most this long, so
 * that its relative times and waits stay true for the page's own periodic fetch.
 */
const VIEW_MAX_AGE_MS = 5000;

export async function startBoardServer(options: BoardServerOptions): Promise<BoardServer> {
  const address = bindAddress(options.host);
  if (address === null)
    throw new EngineError(
      `--host ${options.host}: the board listens on loopback only (127.0.0.1, ::1 or localhost), since anyone who reaches it could act on the queue`,
    );
  const token = randomBytes(32).toString('base64url');
  const state: ServerState = {
    options,
    token,
    port: 0,
    ids: new ItemIds(),
    page: await loadPageFiles(),
    streams: new Map(),
    views: 0,
    view: null,
    offered: { seq: 0, byId: new Map() },
  };
  const server = createServer((req, res) => void handle(state, req, res));
  server.on('upgrade', (req: IncomingMessage, socket: Duplex) => refuseUpgrade(state, req, socket));
  state.port = await listen(server, address, options.port);
  // One subscription for all tabs: a change drops the board computed, then each tab is told.
  const unsubscribe = options.source.subscribe(() => changed(state));
  return {
    url: `${originOf(address, state.port)}/#token=${token}`,
    port: state.port,
    close: () => closeServer(server, state, unsubscribe),
  };
}

interface ServerState {
  options: BoardServerOptions;
  token: string;
  port: number;
  ids: ItemIds;
  page: ReadonlyMap<string, PageFile>;
  /** The open event streams, each with what stops its keepalive. */
  streams: Map<ServerResponse, () => void>;
  /** The board last computed, shared by every tab until the next change. */
  view: View | null;
  /** How many boards were computed: the seq of the next is one more. */
  views: number;
  /**
   * The actions the cards of each id offered in the latest board computed that a tab was given
   * (a board begun later wins over one that ends later): the only actions served.
   */
  offered: { seq: number; byId: Map<string, ReadonlySet<string>> };
}

interface View {
  seq: number;
  at: number;
  board: Promise<Board>;
}

function listen(server: Server, address: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new EngineError(
              `port ${port} on ${address} is in use: choose another with --port (0: any free one)`,
            )
          : error,
      ),
    );
    server.listen(port, address, () => {
      const bound = server.address();
      resolve(typeof bound === 'object' && bound !== null ? bound.port : port);
    });
  });
}

async function closeServer(
  server: Server,
  state: ServerState,
  unsubscribe: () => void,
): Promise<void> {
  unsubscribe();
  // Each stream's keepalive is stopped before it ends: nothing is written after its end.
  for (const [stream, stop] of state.streams) {
    stop();
    stream.end();
  }
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** Upgrades (WebSocket) are not served; a foreign Host is told so as for any request. */
function refuseUpgrade(state: ServerState, req: IncomingMessage, socket: Duplex): void {
  // Node takes its own 'error' listener off an upgraded socket: a client's reset would throw.
  socket.on('error', () => socket.destroy());
  const status = isAllowedHost(req.headers.host, state.port)
    ? '404 Not Found'
    : '421 Misdirected Request';
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, {
    ...HEADERS,
    'Content-Type': type,
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

function refuse(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { ok: false, message });
}

async function handle(
  state: ServerState,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  // The body is never read: nothing a request carries but its path names what it acts on.
  req.resume();
  // A client gone mid-answer is no error of the board's, and must not throw in its process.
  req.on('error', () => res.destroy());
  res.on('error', () => res.destroy());
  try {
    await route(state, req, res);
  } catch (error) {
    state.options.log('warn', `board: ${messageOf(error)}`);
    if (!res.headersSent) refuse(res, 500, messageOf(error));
    else res.end();
  }
}

async function route(state: ServerState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const host = req.headers.host;
  if (host === undefined || !isAllowedHost(host, state.port))
    return refuse(
      res,
      421,
      'This board answers only to localhost, 127.0.0.1 or [::1] with its port',
    );
  const path = new URL(req.url ?? '/', 'http://board.invalid').pathname;
  const method = req.method ?? 'GET';
  if (method === 'POST') return write(state, req, res, host, path);
  if (method !== 'GET' && method !== 'HEAD') return refuse(res, 405, 'GET or POST only');
  const file = state.page.get(path);
  if (file !== undefined) return send(res, 200, file.type, file.body);
  if (path !== '/api/board' && path !== '/api/events') return refuse(res, 404, 'Not found');
  if (!hasToken(req.headers.authorization, state.token))
    return refuse(res, 401, 'The board token is missing or wrong: open the URL engine printed');
  if (path === '/api/events')
    return method === 'GET' ? stream(state, res) : refuse(res, 405, 'The event stream is GET only');
  sendJson(res, 200, await boardOf(state));
}

/** A POST: from the page's own origin, with the token, naming an item by its id. */
async function write(
  state: ServerState,
  req: IncomingMessage,
  res: ServerResponse,
  host: string,
  path: string,
): Promise<void> {
  if (state.options.readOnly) return refuse(res, 405, 'This board is read-only (--read-only)');
  if (!isSameOrigin(req.headers.origin, host))
    return refuse(res, 403, "A write must come from the board's own page (its Origin)");
  if (!hasToken(req.headers.authorization, state.token))
    return refuse(res, 401, 'The board token is missing or wrong: open the URL engine printed');
  const acted = await actionOf(state, path);
  if (acted === null) return refuse(res, 404, 'No such item or action');
  const { what, answer } = acted;
  // What was done changed the files: the next fetch computes the board again.
  if (answer.ok) state.view = null;
  // What a human did through the board, for the log.
  state.options.log('info', `board: ${what}: ${answer.ok ? '' : 'not done: '}${answer.message}`);
  sendJson(res, answer.ok ? 200 : 409, answer);
}

/** `/api/resume`, or `/api/items/<id>/<action>` on an item of the board's table; else null. */
async function actionOf(
  state: ServerState,
  path: string,
): Promise<{ what: string; answer: ActionAnswer } | null> {
  const { actions, root } = state.options;
  if (path === '/api/resume') return { what: 'resume', answer: await resumeQueue(root) };
  const match = /^\/api\/items\/([^/]+)\/([^/]+)$/.exec(path);
  if (match === null) return null;
  const [, id, action] = match as unknown as [string, string, string];
  const item = state.ids.itemOf(id);
  if (item === null || !ACTIONS.includes(action as ActionName)) return null;
  const what = `${action} ${relative(root, item.file)} #${item.noun}`;
  // Only what the card shows: a retry on an approval card would move its #needs-X.
  if (!state.offered.byId.get(id)?.has(action)) {
    const message = `${action} is not offered on this card now: nothing changed`;
    return { what, answer: { ok: false, message } };
  }
  return { what, answer: await runAction(actions, item, action as ActionName) };
}

/** The stream: a `changed` event whenever the source says so, then the page fetches the board. */
function stream(state: ServerState, res: ServerResponse): void {
  res.writeHead(200, { ...HEADERS, 'Content-Type': 'text/event-stream; charset=utf-8' });
  res.write(': connected\n\n');
  const keepalive = setInterval(() => say(res, ': keepalive\n\n'), KEEPALIVE_MS);
  const stop = () => {
    clearInterval(keepalive);
    state.streams.delete(res);
  };
  state.streams.set(res, stop);
  // The response's close, not the request's: a request closes once its (empty) body is read.
  res.on('close', stop);
}

/** Writes to a stream still open; one that has ended or failed is written no more. */
function say(res: ServerResponse, text: string): void {
  if (!res.writableEnded && !res.destroyed) res.write(text);
}

/** The files changed: the board is computed again at the next fetch, and each tab is told. */
function changed(state: ServerState): void {
  state.view = null;
  for (const res of state.streams.keys()) say(res, 'event: changed\ndata: \n\n');
}

/**
 * The board, computed once per change and shared by every tab (at most VIEW_MAX_AGE_MS old);
 * the actions its cards offer become the ones served.
 */
function boardOf(state: ServerState): Promise<Board> {
  if (state.view !== null && Date.now() - state.view.at < VIEW_MAX_AGE_MS) return state.view.board;
  state.views += 1;
  const view: View = { seq: state.views, at: Date.now(), board: computeBoard(state) };
  state.view = view;
  view.board.then(
    (board) => {
      if (view.seq > state.offered.seq) state.offered = { seq: view.seq, byId: offeredOf(board) };
    },
    () => {
      if (state.view === view) state.view = null;
    },
  );
  return view.board;
}

function offeredOf(board: Board): Map<string, ReadonlySet<string>> {
  const offered = new Map<string, Set<string>>();
  for (const card of board.lanes.flatMap((lane) => lane.cards)) {
    const names = offered.get(card.id) ?? new Set<string>();
    for (const action of card.actions) names.add(action.name);
    offered.set(card.id, names);
  }
  return offered;
}

/** The board now: the source's report, with each card's facts and transcript tail. */
async function computeBoard(state: ServerState): Promise<Board> {
  const { source, root, readOnly, tail } = state.options;
  const { report, from } = await source.report();
  const sessions = [
    ...report.running.map((c) => c.session),
    ...report.needsYou.map((n) => (n.kind === 'input' ? n.session : null)),
  ].filter((s): s is string => s !== null);
  // All at once: each tail is quick when cached, and bounded when not (transcript-tails.ts).
  const tails = new Map(
    await Promise.all(
      [...new Set(sessions)].map(async (session) => {
        const dir = resolveSessionRef(root, session);
        return [session, dir === null ? null : await tail(dir).catch(() => null)] as const;
      }),
    ),
  );
  const facts = new Map<string, CardFacts | null>();
  return boardView({
    report,
    from,
    now: new Date(),
    readOnly,
    idOf: (item) => state.ids.idOf(item),
    factsOf: (file) => {
      if (!facts.has(file)) facts.set(file, readCardFacts(file));
      return facts.get(file) ?? null;
    },
    tailOf: (session) => tails.get(session) ?? null,
  });
}
