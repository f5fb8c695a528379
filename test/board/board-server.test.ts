/**
 * The board's server over real HTTP on 127.0.0.1: each hostile request is refused and changes
 * nothing (no token, a wrong token, a cross-origin POST, a POST with no Origin, a foreign Host on
 * the page, the API, the stream and an upgrade, a path-shaped id, a non-loopback --host,
 * --read-only), the token is served nowhere, and the page's own requests work.
 */
import { request } from 'node:http';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { projectActionContext } from '../../src/actions/action-context.js';
import { startBoardServer, type BoardServer } from '../../src/board/board-server.js';
import {
  countsForReport,
  fileBoardSource,
  type BoardSource,
} from '../../src/board/board-source.js';
import type { Board } from '../../src/board/board-view.js';
import { parseDispatchTable } from '../../src/dispatch/dispatch-table.js';
import { judgeOptionsOf, loadSettings } from '../../src/settings/load-settings.js';
import { collectStatus } from '../../src/status/collect-status.js';
import { readPause, writePause } from '../../src/sessions/limit-pause.js';
import { TEST_TAGS_MD } from '../helpers/daemon-harness.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';
import type { WatcherKind } from '../../src/watch/watch-backend.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request as a client sends it: any Host, Origin and path, unnormalised. */
function send(
  port: number,
  options: { method?: string; path: string; headers?: Record<string, string> },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path,
        headers: { Host: `127.0.0.1:${port}`, ...options.headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        // A stream stays open: its first bytes are enough.
        if (res.headers['content-type']?.startsWith('text/event-stream')) {
          res.once('data', () => {
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
            req.destroy();
          });
        }
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

let root: string;
let file: string;
let source: BoardSource;
let server: BoardServer;
let token: string;
let port: number;
/** How many times the report was collected. */
let collected: number;
const NEEDS = '# Fix the login\n**Tags**: #needs-fix\n';

async function start(readOnly = false, watcher: WatcherKind = 'parcel'): Promise<void> {
  const { settings } = await loadSettings(root, {}, process.env);
  const sessions = join(root, 'sessions');
  collected = 0;
  source = await fileBoardSource({
    root,
    paths: [sessions],
    watcher,
    onError: () => undefined,
    collect: () => {
      collected += 1;
      return collectStatus(root, [sessions], parseDispatchTable(TEST_TAGS_MD, 'TAGS.md'), {
        options: judgeOptionsOf(settings),
      });
    },
  });
  server = await startBoardServer({
    root,
    source,
    host: '127.0.0.1',
    port: 0,
    readOnly,
    tail: async () => null,
    actions: await projectActionContext(root, process.env, {
      log: () => undefined,
      graceMs: 1000,
    }),
    log: () => undefined,
  });
  port = server.port;
  token = new URL(server.url).hash.replace('#token=', '');
}

const auth = () => ({ Authorization: `Bearer ${token}` });
const origin = () => ({ Origin: `http://127.0.0.1:${port}` });

async function board(): Promise<Board> {
  const answer = await send(port, { path: '/api/board', headers: auth() });
  expect(answer.status).toBe(200);
  return JSON.parse(answer.body) as Board;
}

/** The event stream as the page reads it: what it said so far, and how to stop reading. */
async function openStream(): Promise<{ text: () => string; stop: () => Promise<void> }> {
  const events: string[] = [];
  const res = await fetch(`http://127.0.0.1:${port}/api/events`, { headers: auth() });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const reading = (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      events.push(new TextDecoder().decode(value));
    }
  })();
  const text = () => events.join('');
  await waitFor(() => text().includes(': connected'));
  return {
    text,
    stop: async () => {
      await reader.cancel().catch(() => undefined);
      await reading;
    },
  };
}

const changes = (text: string) => text.split('event: changed\n').length - 1;

async function cardId(): Promise<string> {
  const card = (await board()).lanes[0]?.cards[0];
  expect(card?.file).toBe('sessions/login.md');
  return card?.id as string;
}

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'engine-board-'));
  await mkdir(join(root, 'sessions'));
  await mkdir(join(root, 'directives'));
  await writeFile(join(root, 'directives', 'TAGS.md'), TEST_TAGS_MD);
  file = join(root, 'sessions', 'login.md');
  await writeFile(file, NEEDS);
});

afterEach(async () => {
  await server?.close();
  await source?.close();
  await rm(root, { recursive: true, force: true });
});

describe('the board server', () => {
  it('approves an item for the page: token, same Origin, an id of its table', async () => {
    await start();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]{43}$/);
    const id = await cardId();
    const answer = await send(port, {
      method: 'POST',
      path: `/api/items/${id}/approve`,
      headers: { ...auth(), ...origin() },
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ ok: true, message: '#needs-fix -> #delegated-fix' });
    expect(await readFile(file, 'utf8')).toBe('# Fix the login\n**Tags**: #delegated-fix\n');
    // The card is gone from Needs you: the file says so.
    expect((await board()).lanes[0]?.cards).toEqual([]);
  });

  it.each([
    ['no token', {}, 401],
    ['a wrong token', { Authorization: `Bearer ${'x'.repeat(43)}` }, 401],
    ['a token that is not a bearer', { Authorization: 'Basic abc' }, 401],
  ])('refuses a POST with %s, changing nothing', async (_what, headers, status) => {
    await start();
    const id = await cardId();
    const answer = await send(port, {
      method: 'POST',
      path: `/api/items/${id}/approve`,
      headers: { ...origin(), ...headers },
    });
    expect(answer.status).toBe(status);
    expect(await readFile(file, 'utf8')).toBe(NEEDS);
    // Nor is the board read without the token.
    const read = await send(port, { path: '/api/board', headers });
    expect(read.status).toBe(401);
    expect(read.body).not.toContain('login');
  });

  it.each([
    ['a cross-origin POST', { Origin: 'http://evil.example' }],
    ['a POST from another port of localhost', { Origin: 'http://127.0.0.1:1' }],
    ['a POST with no Origin', {}],
    ['a POST with Origin null', { Origin: 'null' }],
  ])('refuses %s, changing nothing', async (_what, headers) => {
    await start();
    const id = await cardId();
    const answer = await send(port, {
      method: 'POST',
      path: `/api/items/${id}/approve`,
      headers: { ...auth(), ...headers },
    });
    expect(answer.status).toBe(403);
    expect(await readFile(file, 'utf8')).toBe(NEEDS);
  });

  it('refuses Host: evil.example on the page, the API, the stream, a write and an upgrade', async () => {
    await start();
    const id = await cardId();
    const evil = { Host: 'evil.example' };
    for (const path of ['/', '/board.js', '/api/board', '/api/events']) {
      const answer = await send(port, { path, headers: { ...auth(), ...evil } });
      expect(answer.status, path).toBe(421);
      expect(answer.body).not.toContain('login');
      expect(answer.body).not.toContain('<script');
    }
    const write = await send(port, {
      method: 'POST',
      path: `/api/items/${id}/approve`,
      headers: { ...auth(), Host: 'evil.example', Origin: 'http://evil.example' },
    });
    expect(write.status).toBe(421);
    // The right name with another port is another site too.
    const otherPort = await send(port, { path: '/', headers: { Host: `localhost:${port + 1}` } });
    expect(otherPort.status).toBe(421);
    const upgrade = await send(port, {
      path: '/api/events',
      headers: { ...auth(), ...evil, Connection: 'Upgrade', Upgrade: 'websocket' },
    });
    expect(upgrade.status).toBe(421);
    expect(await readFile(file, 'utf8')).toBe(NEEDS);
    // Each allowed name is served.
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
      expect((await send(port, { path: '/', headers: { Host: host } })).status).toBe(200);
    }
  });

  it.each([
    '/api/items/../../etc/passwd/approve',
    '/api/items/..%2F..%2Fetc%2Fpasswd/approve',
    '/api/items/%2e%2e%2f%2e%2e%2fetc%2fpasswd/approve',
    '/api/items/0123456789abcdef/approve',
    '/api/items/ID/../../ID/approve',
  ])('answers 404 to the path-shaped or unknown id %s, changing nothing', async (path) => {
    await start();
    const id = await cardId();
    const answer = await send(port, {
      method: 'POST',
      path: path.replace(/ID/g, id),
      headers: { ...auth(), ...origin() },
    });
    expect(answer.status).toBe(404);
    expect(answer.body).not.toContain('root:');
    expect(await readFile(file, 'utf8')).toBe(NEEDS);
    // A path that is no static file of the page serves nothing from disk either.
    const page = await send(port, { path: '/../../etc/passwd' });
    expect(page.status).toBe(404);
    expect(page.body).not.toContain('root:');
  });

  it('refuses an unknown action on a known item', async () => {
    await start();
    const id = await cardId();
    const answer = await send(port, {
      method: 'POST',
      path: `/api/items/${id}/delete`,
      headers: { ...auth(), ...origin() },
    });
    expect(answer.status).toBe(404);
    expect(await readFile(file, 'utf8')).toBe(NEEDS);
  });

  it('--read-only serves the board with no action, and refuses every POST', async () => {
    await start(true);
    const shown = await board();
    expect(shown.readOnly).toBe(true);
    expect(shown.lanes.flatMap((l) => l.cards).flatMap((c) => c.actions)).toEqual([]);
    const id = await cardId();
    for (const path of [`/api/items/${id}/approve`, '/api/resume']) {
      const answer = await send(port, {
        method: 'POST',
        path,
        headers: { ...auth(), ...origin() },
      });
      expect(answer.status).toBe(405);
    }
    expect(await readFile(file, 'utf8')).toBe(NEEDS);
  });

  it('sends no CORS header, the strict CSP, and the token in no response', async () => {
    await start();
    const id = await cardId();
    const answers = await Promise.all([
      send(port, { path: '/' }),
      send(port, { path: '/board.js' }),
      send(port, { path: '/board.css' }),
      send(port, { path: '/api/board', headers: auth() }),
      send(port, { path: '/api/events', headers: auth() }),
      send(port, { path: '/nothing' }),
      send(port, { method: 'OPTIONS', path: `/api/items/${id}/approve`, headers: origin() }),
      send(port, { method: 'POST', path: `/api/items/${id}/next`, headers: auth() }),
      send(port, { path: '/api/board', headers: { Authorization: `Bearer ${token}x` } }),
    ]);
    for (const answer of answers) {
      expect(Object.keys(answer.headers).filter((h) => h.startsWith('access-control-'))).toEqual(
        [],
      );
      expect(answer.headers['content-security-policy']).toBe(
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      );
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
      expect(answer.headers['referrer-policy']).toBe('no-referrer');
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(answer.body).not.toContain(token);
      expect(JSON.stringify(answer.headers)).not.toContain(token);
    }
    expect(answers[0]?.body).toContain('<script src="/board.js"');
    expect(answers[6]?.status).toBe(405);
  });

  it('refuses a non-loopback host before listening', async () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.10', 'example.com', '127.0.0.2']) {
      await expect(
        startBoardServer({
          root,
          source: {
            report: async () => ({}) as never,
            subscribe: () => () => {},
            close: async () => {},
          },
          host,
          port: 0,
          readOnly: false,
          tail: async () => null,
          actions: await projectActionContext(root, process.env, { log: () => {}, graceMs: 0 }),
          log: () => {},
        }),
      ).rejects.toThrow(/loopback only/);
    }
    const cli = await runCli(['board', '--root', root, '--host', '0.0.0.0', '--port', '0']);
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toMatch(/--host 0\.0\.0\.0: the board listens on loopback only/);
    expect(cli.stdout).toBe('');
  });

  it('says a port in use is in use, and a bad --port or --board-port is refused', async () => {
    await start();
    const taken = await runCli(['board', '--root', root, '--port', String(port)]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain(`port ${port} on 127.0.0.1 is in use`);
    const bad = await runCli(['board', '--root', root, '--port', '70000']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      "ERROR: Invalid --port '70000': expected a whole number from 0 to 65535\n",
    );
    const once = await runCli(['run', '--monitor-tags', '--root', root, '--board', '--once']);
    expect(once.code).toBe(1);
    expect(once.stderr).toContain('--board goes with a running daemon');
  });

  it('lifts the usage-limit pause as engine resume does', async () => {
    const until = new Date(Date.now() + 3600_000).toISOString();
    await writePause(root, { until, reason: 'usage limit', since: new Date().toISOString() });
    await start();
    const shown = await board();
    expect(shown.paused).toMatch(/^usage limit; lifts in /);
    expect(shown.resume).toBe('engine resume');
    const answer = await send(port, {
      method: 'POST',
      path: '/api/resume',
      headers: { ...auth(), ...origin() },
    });
    expect(JSON.parse(answer.body)).toEqual({
      ok: true,
      message: `Lifted the pause until ${until} (usage limit).`,
    });
    expect(await readPause(root)).toBeNull();
  });

  it('says "changed" on its stream within a second of a change to a file', async () => {
    await start();
    const events: string[] = [];
    const res = await fetch(`http://127.0.0.1:${port}/api/events`, { headers: auth() });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        events.push(new TextDecoder().decode(value));
      }
    })();
    await waitFor(() => events.join('').includes(': connected'));
    const changedAt = Date.now();
    await writeFile(file, '# Fix the login\n**Tags**: #needs-fix #P1\n');
    await waitFor(() => events.join('').includes('event: changed\n'), { timeoutMs: 5000 });
    expect(Date.now() - changedAt).toBeLessThan(1000);
    await reader.cancel();
    await reading;
  });

  it('approves the one #needs-X its card shows; a card older than the file changes nothing', async () => {
    const two =
      '# Two asks\n**Tags**: #delegated-docs\n\n- Drop the prod table? #needs-fix\n- Rename the flag #needs-fix\n';
    await writeFile(file, two);
    await start();
    const asks = async () =>
      ((await board()).lanes[0]?.cards ?? []).filter((c) => c.state.startsWith('waits for'));
    const cards = await asks();
    const inline = (line: number) =>
      cards.find((c) => c.actions[0]?.command.endsWith(`--inline ${line}`))?.id as string;
    expect(cards).toHaveLength(2);
    expect(inline(4)).not.toBe(inline(5));
    const approve = (id: string) =>
      send(port, {
        method: 'POST',
        path: `/api/items/${id}/approve`,
        headers: { ...auth(), ...origin() },
      });
    const done = await approve(inline(5));
    expect(done.status).toBe(200);
    expect(await readFile(file, 'utf8')).toBe(
      two.replace('Rename the flag #needs-fix', 'Rename the flag #delegated-fix'),
    );
    // The same ask again, then line 4 removed: the card of line 5 no longer names what it showed.
    await writeFile(file, two);
    expect((await asks()).map((c) => c.id).sort()).toEqual([inline(4), inline(5)].sort());
    const shorter = '# Two asks\n**Tags**: #delegated-docs\n\n- Rename the flag #needs-fix\n';
    await writeFile(file, shorter);
    const stale = await approve(inline(5));
    expect(stale.status).toBe(409);
    expect(JSON.parse(stale.body)).toMatchObject({ ok: false });
    expect(await readFile(file, 'utf8')).toBe(shorter);
  });

  it('refuses an action its card does not offer (retry on an approval card), changing nothing', async () => {
    await start();
    const id = await cardId();
    const answer = await send(port, {
      method: 'POST',
      path: `/api/items/${id}/retry`,
      headers: { ...auth(), ...origin() },
    });
    expect(answer.status).toBe(409);
    expect(JSON.parse(answer.body)).toEqual({
      ok: false,
      message: 'retry is not offered on this card now: nothing changed',
    });
    expect(await readFile(file, 'utf8')).toBe(NEEDS);
  });

  it('serves the event stream for GET only: HEAD is refused and ends', async () => {
    await start();
    const head = await send(port, { method: 'HEAD', path: '/api/events', headers: auth() });
    expect(head.status).toBe(405);
    expect((await send(port, { method: 'HEAD', path: '/' })).status).toBe(200);
  }, 5000);

  it('survives a change said while it closes its streams', async () => {
    let fire = (): void => undefined;
    const stub: BoardSource = {
      report: async () => ({}) as never,
      // A source that keeps calling its listener, as one may while it closes.
      subscribe: (listener) => {
        fire = listener;
        return () => undefined;
      },
      close: async () => undefined,
    };
    source = stub;
    server = await startBoardServer({
      root,
      source: stub,
      host: '127.0.0.1',
      port: 0,
      readOnly: false,
      tail: async () => null,
      actions: await projectActionContext(root, process.env, { log: () => {}, graceMs: 0 }),
      log: () => {},
    });
    port = server.port;
    token = new URL(server.url).hash.replace('#token=', '');
    const stream = await openStream();
    const closing = server.close();
    fire();
    await closing;
    fire();
    await stream.stop();
  });

  it('computes the board once per change, for every tab', async () => {
    await start();
    const stream = await openStream();
    await Promise.all([board(), board(), board()]);
    await board();
    expect(collected).toBe(1);
    await writeFile(file, '# Fix the login\n**Tags**: #needs-fix #P1\n');
    await waitFor(() => changes(stream.text()) === 1, { timeoutMs: 5000 });
    await Promise.all([board(), board()]);
    expect(collected).toBe(2);
    await stream.stop();
  });

  it.each(['parcel', 'chokidar'] as const)(
    'says "changed" when an agent state changes, under %s',
    async (watcher) => {
      const session = join(root, 'sessions', '2026_11_26_090000_FIX_login_0001');
      await mkdir(session);
      await start(false, watcher);
      const stream = await openStream();
      await writeFile(join(session, 'agent-state.json'), '{"state":"waiting"}\n');
      await waitFor(() => changes(stream.text()) === 1, { timeoutMs: 5000 });
      await stream.stop();
    },
  );

  it('counts a change to what the report reads, not to a transcript or a heartbeat', () => {
    const counts = countsForReport(root, [join(root, 'sessions')]);
    const session = join(root, 'sessions', '2026_11_26_090000_FIX_login_0001');
    for (const path of [
      file,
      join(session, 'agent-state.json'),
      join(session, '.state.json'),
      join(root, 'sessions', '.engine', 'events.jsonl'),
      join(root, 'sessions', '.engine', 'pause.json'),
      join(root, 'sessions', '.engine', 'daemon.lock'),
      join(root, 'directives', 'TAGS.md'),
      join(root, 'directives', 'engine.json'),
    ])
      expect(counts(path), path).toBe(true);
    for (const path of [
      join(session, 'agent.log'),
      join(session, '.heartbeat'),
      join(root, 'directives', 'notes.md'),
      join(root, 'README.md'),
      join(root, 'sessions', 'notes.txt'),
    ])
      expect(counts(path), path).toBe(false);
  });
});
