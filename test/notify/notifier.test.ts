/**
 * The Notifier with real processes: the notification command's argv, a hanging or failing
 * command, and a tmux message seen by a real client attached (through node-pty) to an isolated
 * tmux server. Every process started is ended by pid, and the tmux server by its socket.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Notifier } from '../../src/notify/notifier.js';
import { NOTIFY_EVENTS, splitNotifyTemplate } from '../../src/notify/notify-event.js';
import { loadNodePty } from '../../src/runners/pty-runner.js';
import { killTmuxServer, shellQuote } from '../helpers/daemon-harness.js';
import { NOTIFY_LOG, loggedCalls, notifyLogTemplate } from '../helpers/notify-log.js';
import { waitFor } from '../helpers/wait-for.js';
import { testSocketName, tmux } from '../runners/support.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'engine-notify-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function logged(): { lines: string[]; log: (level: string, message: string) => void } {
  const lines: string[] = [];
  return { lines, log: (level, message) => lines.push(`${level} ${message}`) };
}

describe('Notifier', () => {
  it('runs the command once per notifying event, its argv exact, through no shell', async () => {
    const dir = await tempDir();
    const out = join(dir, 'calls.jsonl');
    const template = notifyLogTemplate(out, '{event} {file} {noun} {session} {reason} {until}');
    const { lines, log } = logged();
    const notifier = new Notifier({
      root: dir,
      command: splitNotifyTemplate(template),
      via: [],
      tmuxSocket: undefined,
      log,
    });
    const hostile = join(dir, `$(touch pwned) ;rm -rf x 'q".md`);
    for (const event of NOTIFY_EVENTS)
      notifier.notify({
        event,
        file: hostile,
        noun: 'fix',
        session: 's',
        reason: '`id`',
        until: 'T',
      });
    notifier.notify({ event: 'claimed', file: hostile, noun: 'fix' });
    await notifier.close();
    expect(loggedCalls(out).sort()).toEqual(
      NOTIFY_EVENTS.map((event) => [event, hostile, 'fix', 's', '`id`', 'T']).sort(),
    );
    expect(existsSync(join(dir, 'pwned'))).toBe(false);
    expect(lines.filter((l) => l.startsWith('warn'))).toEqual([]);
  });

  it('kills a command that runs past its time limit, and logs a failing or missing one', async () => {
    const dir = await tempDir();
    const out = join(dir, 'calls.jsonl');
    const { lines, log } = logged();
    const hang = new Notifier({
      root: dir,
      command: [process.execPath, NOTIFY_LOG, out, '{event}'],
      via: [],
      tmuxSocket: undefined,
      log,
      timeoutMs: 500,
    });
    process.env.TEST_NOTIFY_HANG = '1';
    try {
      hang.notify({ event: 'done' });
      await waitFor(() => loggedCalls(out).length === 1, {
        message: 'the hanging command to start',
      });
    } finally {
      delete process.env.TEST_NOTIFY_HANG;
    }
    await hang.close();
    expect(lines).toEqual([
      expect.stringMatching(
        /^warn notification: the notification command \(.*\) ran past 500 ms and was killed$/,
      ),
    ]);
    for (const command of [['sh', '-c', 'echo nope >&2; exit 3'], [join(dir, 'no-such-program')]]) {
      lines.length = 0;
      const notifier = new Notifier({ root: dir, command, via: [], tmuxSocket: undefined, log });
      notifier.notify({ event: 'requeued' });
      await notifier.close();
      expect(lines).toEqual([
        expect.stringMatching(/^warn notification: the notification command/),
      ]);
    }
    expect(lines[0]).toMatch(/could not run: .*ENOENT/);
  });

  it('runs notify-send where it is on PATH, its argv exact; a failing one warns once', async () => {
    const dir = await tempDir();
    const out = join(dir, 'calls.jsonl');
    const bin = join(dir, 'bin');
    await mkdir(bin);
    const fake = join(bin, 'notify-send');
    await writeFile(
      fake,
      `#!/bin/sh\nexec ${shellQuote(process.execPath)} ${shellQuote(NOTIFY_LOG)} ${shellQuote(out)} "$@"\n`,
    );
    await chmod(fake, 0o755);
    const path = process.env.PATH;
    const { lines, log } = logged();
    // The notifier looks for notify-send on PATH when it is made.
    const desktopNotifier = (): Notifier => {
      process.env.PATH = `${bin}:${path ?? ''}`;
      try {
        return new Notifier({ root: dir, command: null, via: ['desktop'], tmuxSocket: null, log });
      } finally {
        process.env.PATH = path;
      }
    };
    let notifier = desktopNotifier();
    notifier.notify({ event: 'done', file: join(dir, 'sessions', 'a.md'), noun: 'fix' });
    notifier.notify({ event: 'spawned', file: join(dir, 'sessions', 'a.md'), noun: 'fix' });
    await notifier.close();
    expect(loggedCalls(out)).toEqual([
      ['--app-name=engine', '--', 'engine: done sessions/a.md #fix'],
    ]);
    expect(lines).toEqual([]);

    await writeFile(fake, '#!/bin/sh\necho "no notification service" >&2\nexit 1\n');
    notifier = desktopNotifier();
    notifier.notify({ event: 'done' });
    await notifier.close();
    notifier.notify({ event: 'requeued' });
    await notifier.close();
    expect(lines).toEqual([
      expect.stringMatching(
        /^warn notification: notify-send .* failed \(exit 1\): no notification service$/,
      ),
      expect.stringMatching(/^debug notification: notify-send /),
    ]);
  });

  it('shows the event to a client attached to the tmux server, running nothing a name holds', async () => {
    const pty = await loadNodePty().catch(() => null);
    if (!pty) return expect.fail('node-pty did not load: the attached client needs it');
    const dir = await tempDir();
    const socket = testSocketName();
    cleanups.push(() => killTmuxServer(socket));
    await tmux(socket, 'new-session', '-d', '-s', 'dispatch', '-x', '200', '-y', '20');
    const env = { ...process.env, TMUX: '', TMUX_PANE: '', TERM: 'xterm' } as Record<
      string,
      string
    >;
    const client = pty.spawn('tmux', ['-L', socket, 'attach', '-t', 'dispatch'], {
      name: 'xterm',
      cols: 200,
      rows: 20,
      cwd: dir,
      env,
    });
    cleanups.push(() => {
      try {
        process.kill(client.pid, 'SIGKILL');
      } catch {
        // ended with the server
      }
    });
    let screen = '';
    client.onData((data: string) => (screen += data));
    await waitFor(async () => (await tmux(socket, 'list-clients')).trim() !== '', {
      message: 'the tmux client to attach',
    });
    const { lines, log } = logged();
    const notifier = new Notifier({
      root: dir,
      command: null,
      via: ['tmux'],
      tmuxSocket: socket,
      log,
    });
    const file = join(dir, `#(touch ${join(dir, 'pwned')}) a.md`);
    notifier.notify({ event: 'done', file, noun: 'fix' });
    await notifier.close();
    await waitFor(() => screen.includes('engine: done'), {
      message: () => `the message on the client's screen: ${JSON.stringify(screen.slice(-500))}`,
    });
    expect(screen).toContain('#(touch');
    expect(existsSync(join(dir, 'pwned'))).toBe(false);
    expect(lines.filter((l) => l.startsWith('warn'))).toEqual([]);
  });
});
