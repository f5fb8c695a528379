/**
 * `engine board` and `engine run --monitor-tags --board` as real processes: the URL with its token
 * is printed once, on stdout, and the token is in no log line, no event and no file of the root.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Board } from '../../src/board/board-view.js';
import { CLI } from '../helpers/run-cli.js';
import { read, useDaemonHarness, waitForReady, waitForTag } from '../helpers/daemon-harness.js';
import { waitFor } from '../helpers/wait-for.js';

const URL_LINE = /^Board: (http:\/\/127\.0\.0\.1:(\d+)\/#token=([\w-]+))$/m;

/** Every file under `dir`, as text. */
async function allText(dir: string): Promise<string> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const texts = await Promise.all(
    entries
      .filter((e) => e.isFile())
      .map((e) => readFile(join(e.parentPath, e.name), 'utf8').catch(() => '')),
  );
  return texts.join('\n');
}

/** `engine board` on a free port, followed until it prints its URL; the harness ends it. */
async function startBoardProcess(root: string, track: (child: ChildProcess) => void) {
  const child = spawn(process.execPath, [CLI, 'board', '--root', root, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child);
  const out = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out.stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out.stderr += d));
  const [, url, port, token] = await waitFor(() => URL_LINE.exec(out.stdout), {
    message: () => `the board's URL; stderr: ${out.stderr}`,
  });
  return { child, out, url: url as string, port: port as string, token: token as string };
}

async function post(url: URL, path: string, token: string): Promise<Response> {
  return fetch(new URL(path, url), {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, Origin: url.origin },
  });
}

describe('the board as a command', () => {
  const h = useDaemonHarness();

  it('engine board prints its URL once on stdout, and the token nowhere else', async () => {
    await h.request('login.md', '# Login\n**Tags**: #needs-fix\n');
    const { child, out, url, token } = await startBoardProcess(h.root, (c) => h.children.track(c));
    const board = await fetch(new URL('/api/board', url), {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(board.status).toBe(200);
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out.stdout.match(/token=/g)).toHaveLength(1);
    expect(out.stderr).toContain('board listening on port');
    expect(out.stderr).not.toContain(token);
  });

  it('engine run --board whose port is taken exits 1 before the daemon claims anything', async () => {
    const file = await h.request('fix.md', '# Fix\n**Tags**: #delegated-fix\n');
    const board = spawn(process.execPath, [CLI, 'board', '--root', h.root, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    h.children.track(board);
    let stdout = '';
    board.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const [, , port] = await waitFor(() => URL_LINE.exec(stdout));
    const d = h.start(['--board', '--board-port', port as string]);
    expect(await d.exited).toBe(1);
    expect(d.output()).toContain(`port ${port} on 127.0.0.1 is in use`);
    expect(await read(file)).toContain('#delegated-fix');
    expect(h.agents()).toEqual([]);
  });

  it('engine run --board serves the board beside the daemon; its log and files hold no token', async () => {
    const file = await h.request('login.md', '# Login\n**Tags**: #needs-fix\n');
    const d = h.start(['--board', '--board-port', '0'], { TEST_AGENT_MODE: 'hold' });
    let stderr = '';
    d.child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    await waitForReady(d);
    const [, url, , token] = await waitFor(() => URL_LINE.exec(d.output()), {
      message: () => `the board's URL; output: ${d.output()}`,
    });
    const base = new URL(url as string);
    const board = (await (
      await fetch(new URL('/api/board', base), { headers: { Authorization: `Bearer ${token}` } })
    ).json()) as { lanes: Array<{ cards: Array<{ id: string }> }> };
    const id = board.lanes[0]?.cards[0]?.id as string;
    expect((await post(base, `/api/items/${id}/approve`, token as string)).status).toBe(200);
    // The daemon claims what the board approved.
    await waitForTag(file, ['#claimed-fix']);
    expect(await d.stop()).toBe(0);
    expect(d.output().match(/token=/g)).toHaveLength(1);
    expect(stderr).toContain('board listening on port');
    expect(stderr).toContain('board: approve sessions/login.md #fix: #needs-fix -> #delegated-fix');
    expect(stderr).not.toContain(token);
    expect(await allText(h.root)).not.toContain(token);
    expect(await read(file)).toContain('#claimed-fix');
  });

  it('engine board survives clients that ask for an upgrade and reset the connection', async () => {
    const { child, out, url, port, token } = await startBoardProcess(h.root, (c) =>
      h.children.track(c),
    );
    let exit: number | null | undefined;
    child.on('exit', (code) => (exit = code));
    for (let i = 0; i < 20; i += 1) {
      const socket = connect(Number(port), '127.0.0.1');
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.write(
        `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n`,
      );
      socket.resetAndDestroy();
    }
    const board = await fetch(new URL('/api/board', url), {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(board.status, out.stderr).toBe(200);
    expect(exit, out.stderr).toBeUndefined();
  });

  it('engine run --board words the waits with the daemon settings (--max-agents 1)', async () => {
    await h.request('fix.md', '# Fix\n**Tags**: #delegated-fix\n');
    await h.request('chores.md', '# Chores\n**Tags**: #delegated-chores\n');
    const d = h.start(['--board', '--board-port', '0', '--max-agents', '1'], {
      TEST_AGENT_MODE: 'hold',
    });
    await waitForReady(d);
    await h.waitForAgents(1);
    const [, url, , token] = await waitFor(() => URL_LINE.exec(d.output()));
    let shown: string | null | undefined;
    await waitFor(
      async () => {
        const board = (await (
          await fetch(new URL('/api/board', url), { headers: { Authorization: `Bearer ${token}` } })
        ).json()) as Board;
        shown = board.lanes.find((l) => l.name === 'waiting')?.cards[0]?.why;
        return shown === 'all agents busy: 1 of --max-agents 1 running';
      },
      { timeoutMs: 10_000, message: () => `the wait for --max-agents; shown: ${shown}` },
    );
    expect(await d.stop()).toBe(0);
  });
});
