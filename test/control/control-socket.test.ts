/**
 * The daemon's control socket, on a real daemon (the built CLI): private to its owner, kept by
 * the daemon that holds the lock, replaced when a dead daemon left it, refused to another engine
 * version, and answering `engine status` and `engine tag find`.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectDaemon, HELLO_TIMEOUT_MS } from '../../src/control/control-client.js';
import { CONTROL_VERSION, controlSocketPath } from '../../src/control/protocol.js';
import { statusText } from '../../src/cli/status.js';
import { readDispatchTable } from '../../src/cli/paths.js';
import { loadSettings } from '../../src/settings/load-settings.js';
import { plainStatusQuery } from '../../src/cli/run-daemon.js';
import { TEST_TAGS_MD, useDaemonHarness, type DaemonProcess } from '../helpers/daemon-harness.js';
import { runCli, type CliResult } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

const h = useDaemonHarness();

/** Waits for the daemon's tag index (said in its log) after it is ready. */
async function waitForIndex(d: DaemonProcess): Promise<void> {
  await waitFor(() => d.output().includes('tag index ready'), {
    message: () => `the tag index; output:\n${d.output()}`,
  });
}

function engine(args: string[], ask: '0' | 'only'): Promise<CliResult> {
  return runCli(args, { cwd: h.root, env: { ...process.env, ENGINE_ASK_DAEMON: ask } });
}

describe('the control socket', () => {
  it('is a socket only its owner may use, in a directory only its owner may enter', async () => {
    // A directory left open to others (made by hand, or by an older engine) is closed first.
    const open = dirname(controlSocketPath(h.root));
    mkdirSync(open, { recursive: true });
    chmodSync(open, 0o755);
    const d = h.start();
    await waitForIndex(d);
    const path = controlSocketPath(h.root);
    const socket = lstatSync(path);
    expect(socket.isSocket()).toBe(true);
    expect(socket.mode & 0o777).toBe(0o600);
    expect(socket.uid).toBe(process.getuid?.());
    const dir = lstatSync(dirname(path));
    expect(dir.mode & 0o777).toBe(0o700);
    expect(dir.uid).toBe(process.getuid?.());
    await d.stop();
    expect(existsSync(path)).toBe(false);
  });

  it('stays with the daemon that holds the lock: a second daemon neither takes nor removes it', async () => {
    await h.request('a.md', '# A\n\n**Tags**: #needs-a\n');
    const first = h.start();
    await waitForIndex(first);
    const second = h.start();
    expect(await second.exited).not.toBe(0);
    expect(second.output()).toContain('another daemon');
    const client = await connectDaemon(h.root);
    expect(client).not.toBeNull();
    const answer = await client?.find({
      pattern: '#needs-a',
      tagsOnly: false,
      paths: [{ given: 'sessions', absolute: h.sessions }],
    });
    client?.close();
    expect(answer?.matches.map((m) => m.path)).toEqual(['sessions/a.md']);
  });

  it('replaces the socket a killed daemon left, and clients read the files meanwhile', async () => {
    await h.request('a.md', '# A\n\n**Tags**: #needs-a\n');
    const killed = h.start();
    await waitForIndex(killed);
    await killed.kill9();
    const path = controlSocketPath(h.root);
    expect(lstatSync(path).isSocket()).toBe(true);
    expect(await connectDaemon(h.root)).toBeNull();
    const fromFiles = await engine(['tag', 'find', '#needs-a'], '0');
    expect(await runCli(['tag', 'find', '#needs-a'], { cwd: h.root })).toEqual(fromFiles);
    expect((await engine(['tag', 'find', '#needs-a'], 'only')).code).not.toBe(0);
    const next = h.start();
    await waitForIndex(next);
    expect(await engine(['tag', 'find', '#needs-a'], 'only')).toEqual(fromFiles);
  });

  it('a stopped daemon (SIGSTOP) holds a client no longer than the hello deadline', async () => {
    const d = h.start();
    await waitForIndex(d);
    const pid = d.child.pid as number;
    process.kill(pid, 'SIGSTOP');
    try {
      const started = Date.now();
      expect(await connectDaemon(h.root)).toBeNull();
      expect(Date.now() - started).toBeLessThan(HELLO_TIMEOUT_MS * 2 + 1000);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
  });

  it('is not trusted in a directory others may enter: the client reads the files', async () => {
    const d = h.start();
    await waitForIndex(d);
    const dir = dirname(controlSocketPath(h.root));
    expect(await connectDaemon(h.root).then((c) => (c?.close(), c !== null))).toBe(true);
    chmodSync(dir, 0o755);
    try {
      expect(await connectDaemon(h.root)).toBeNull();
    } finally {
      chmodSync(dir, 0o700);
    }
  });

  it('builds no index with the chokidar backend (no sync file is reported): finds read the files', async () => {
    await h.request('a.md', '# A\n\n**Tags**: #needs-a\n');
    const d = h.start(['--watcher', 'chokidar']);
    await waitFor(() => existsSync(controlSocketPath(h.root)), { message: () => d.output() });
    const only = await engine(['tag', 'find', '#needs-a'], 'only');
    expect(only.stderr).toContain('ENGINE_ASK_DAEMON=only');
    expect(d.output()).toContain('monitoring');
    expect(d.output()).not.toContain('tag index');
  });

  it('answers no client of another engine version; that client reads the files', async () => {
    const d = h.start();
    await waitForIndex(d);
    expect(await connectDaemon(h.root, { version: '0/0.0.0' })).toBeNull();
    const own = await connectDaemon(h.root);
    expect(own).not.toBeNull();
    own?.close();
  });

  it('answers status and find, as the files do', async () => {
    await h.request('a.md', '# A\n\n**Tags**: #needs-a\n\nSee `#needs-b` and #needs-c.\n');
    const d = h.start();
    await waitForIndex(d);
    for (const args of [
      ['tag', 'find', '#needs-*'],
      ['tag', 'find', '#needs-*', 'sessions', '--json'],
      ['status', '--json'],
    ]) {
      const fromDaemon = await engine(args, 'only');
      expect(fromDaemon.code, fromDaemon.stderr).toBe(0);
      expect(fromDaemon).toEqual(await engine(args, '0'));
    }
  });

  it('renders the status text itself: the client parses no report and renders nothing', async () => {
    await h.request('a.md', '# A\n\n**Tags**: #needs-a\n');
    const d = h.start();
    await waitForIndex(d);
    const { settings } = await loadSettings(h.root, {}, {});
    const used = await readDispatchTable(h.root);
    const shown = { path: used.path, shipped: used.shipped };
    const query = await plainStatusQuery(h.root, settings);
    const client = await connectDaemon(h.root);
    try {
      const report = await client!.status(query);
      expect(await client!.statusText({ ...query, json: true, shown })).toBe(
        JSON.stringify({ ...report, table: shown }, null, 2),
      );
      const text = await client!.statusText({ ...query, json: false, shown });
      expect(text).toBe(statusText(report!, shown, false, new Date(query.judging.nowMs)));
      expect(text).toContain('a.md');
    } finally {
      client?.close();
    }
  });

  it('asks itself a plain status once its index is built, so the first status a user runs is warm', async () => {
    await h.request('a.md', '# A\n\n**Tags**: #needs-a\n');
    const d = h.start();
    await waitFor(() => d.output().includes('status warmed'), {
      message: () => `the warm status; output:\n${d.output()}`,
    });
    expect(d.output().indexOf('status warmed')).toBeGreaterThan(
      d.output().indexOf('tag index ready'),
    );
    const fromDaemon = await engine(['status', '--json'], 'only');
    expect(fromDaemon.code, fromDaemon.stderr).toBe(0);
    expect(fromDaemon.stdout).toContain('a.md');
    expect(fromDaemon).toEqual(await engine(['status', '--json'], '0'));
  });

  it('streams a notice when a watched file changes', async () => {
    const d = h.start();
    await waitForIndex(d);
    const client = await connectDaemon(h.root);
    expect(client).not.toBeNull();
    let notices = 0;
    const unsubscribe = client?.subscribe(() => notices++);
    // The subscription is made once its request is answered: a find after it is answered later.
    await client?.find({
      pattern: '#x',
      tagsOnly: false,
      paths: [{ given: 's', absolute: h.sessions }],
    });
    await writeFile(h.file('b.md'), '# B\n\n**Tags**: #needs-b\n');
    await waitFor(() => notices > 0, { message: 'a change notice' });
    unsubscribe?.();
    client?.close();
  });

  it('keeps at most one unsent notice for a subscriber that stops reading', async () => {
    // An answer larger than the socket's buffers stays queued in the daemon while the client
    // does not read: the notices queued after it are what a stalled subscriber costs.
    const tag = `#needs-${'x'.repeat(100)}`;
    const body = `# T\n\n${`${tag}\n`.repeat(1000)}`;
    for (let n = 0; n < 20; n++) await h.request(`t${n}.md`, body);
    const d = h.start();
    await waitForIndex(d);
    const observer = await connectDaemon(h.root);
    let observed = 0;
    observer?.subscribe(() => observed++);
    await observer?.find({
      pattern: '#x',
      tagsOnly: false,
      paths: [{ given: 's', absolute: h.sessions }],
    });

    const stalled = createConnection(controlSocketPath(h.root));
    let received = '';
    let paused = false;
    stalled.setEncoding('utf8');
    stalled.on('data', (chunk: string) => {
      received += chunk;
      if (paused || !received.includes('"id":3')) return;
      paused = true;
      stalled.pause();
    });
    const ask = (request: object): boolean => stalled.write(`${JSON.stringify(request)}\n`);
    ask({ id: 1, op: 'hello', version: CONTROL_VERSION });
    ask({ id: 2, op: 'subscribe' });
    ask({
      id: 3,
      op: 'find',
      pattern: tag,
      tagsOnly: false,
      paths: [{ given: 's', absolute: h.sessions }],
    });
    await waitFor(() => stalled.isPaused(), { message: 'the start of the large answer' });

    for (let n = 0; n < 5; n++) {
      const before = observed;
      await writeFile(h.file(`c${n}.md`), `# C\n\n**Tags**: #needs-c${n}\n`);
      await waitFor(() => observed > before, { message: `change notice ${n}` });
    }
    const atResume = observed;
    stalled.resume();
    ask({
      id: 4,
      op: 'find',
      pattern: '#x',
      tagsOnly: false,
      paths: [{ given: 's', absolute: h.sessions }],
    });
    await waitFor(() => received.includes('"id":4'), { message: 'the last answer' });
    // A change's later notices (its settle, the index's read of it) can come after the resume;
    // each goes to both subscribers at once, so the observer has it before the answer to its
    // next ask. Those are not the stalled subscriber's queue.
    await observer?.find({
      pattern: '#x',
      tagsOnly: false,
      paths: [{ given: 's', absolute: h.sessions }],
    });
    const sinceResume = observed - atResume;
    stalled.destroy();
    observer?.close();
    const afterAnswer = received.slice(received.indexOf('"id":3'), received.indexOf('"id":4'));
    const notices = afterAnswer.split('"event":"changed"').length - 1;
    expect(notices).toBeGreaterThanOrEqual(1);
    expect(notices - sinceResume).toBeLessThanOrEqual(1);
  });

  it('is not made when its path is too long for a Unix socket: the CLI reads the files', async () => {
    const deep = join(h.root, 'x'.repeat(60));
    mkdirSync(join(deep, 'directives'), { recursive: true });
    mkdirSync(join(deep, 'sessions'));
    await writeFile(join(deep, 'directives', 'TAGS.md'), TEST_TAGS_MD);
    await writeFile(join(deep, 'sessions', 'a.md'), '# A\n\n**Tags**: #needs-a\n');
    const d = h.start(['--root', deep]);
    await waitFor(() => d.output().includes('no control socket'), {
      message: () => `the warning; output:\n${d.output()}`,
    });
    const found = await runCli(['tag', 'find', '#needs-a'], { cwd: deep });
    expect(found).toEqual({ code: 0, stdout: 'sessions/a.md\n', stderr: '' });
  });
});
