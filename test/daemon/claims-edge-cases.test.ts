import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  agentStarts,
  AGENT_CMD,
  makeRoot,
  release,
  startDaemon,
  waitForReady,
  type DaemonProcess,
  type TestRoot,
} from '../helpers/daemon-harness.js';
import { CLI } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

let t: TestRoot;
let daemons: DaemonProcess[] = [];

afterEach(async () => {
  for (const d of daemons) if (d.child.exitCode === null) await d.kill9();
  daemons = [];
  await t?.cleanup();
});

function start(extra: string[] = [], env: Record<string, string> = {}): DaemonProcess {
  const d = startDaemon(t, extra, env);
  daemons.push(d);
  return d;
}

const read = (file: string) => readFile(file, 'utf8');

describe('claims: edge cases', () => {
  it('runs two delegated nouns of one file one after the other, each exactly once', async () => {
    t = await makeRoot();
    const d = start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = join(t.sessions, 'TWO.md');
    await writeFile(file, '# Two\n**Tags**: #delegated-fix #delegated-implementation\n');
    const [first] = await waitFor(() => agentStarts(t).length === 1 && agentStarts(t));
    const text = await read(file);
    expect(text.match(/#claimed-/g)).toHaveLength(1);
    expect(text.match(/\*\*Session\*\*:/g)).toHaveLength(1);
    await release(first!.session);
    const [, second] = await waitFor(() => agentStarts(t).length === 2 && agentStarts(t));
    expect(second!.noun).not.toBe(first!.noun);
    await release(second!.session);
    await waitFor(async () => (await read(file)).match(/#done-/g)?.length === 2);
    expect(agentStarts(t)).toHaveLength(2);
  });

  it('keeps watching a claim whose Session line an agent moved down, and requeues it when the agent dies', async () => {
    t = await makeRoot();
    const d = start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = join(t.sessions, 'MOVED.md');
    await writeFile(file, '# M\n**Tags**: #delegated-fix\n');
    const [agent] = await waitFor(() => agentStarts(t).length === 1 && agentStarts(t));
    const claimed = await waitFor(async () => {
      const now = await read(file);
      return now.includes('**Session**:') ? now : null;
    });
    await writeFile(
      file,
      claimed.replace('**Tags**: #claimed-fix\n', '**Tags**: #claimed-fix\n**Status**: working\n'),
    );
    process.kill(agent!.pid, 'SIGKILL');
    const requeued = await waitFor(async () => {
      const now = await read(file);
      return now.includes('#needs-fix') ? now : null;
    });
    expect(requeued).toContain('**Status**: working');
    expect(requeued).toContain('## Recovery');
  });

  it('--once restores a claim an editor overwrote instead of starting a second agent', async () => {
    t = await makeRoot();
    const d = start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = join(t.sessions, 'REQ.md');
    const original = '# R\n**Tags**: #delegated-fix\n';
    await writeFile(file, original);
    const [agent] = await waitFor(() => agentStarts(t).length === 1 && agentStarts(t));
    await waitFor(async () => (await read(file)).includes('**Session**:'));
    await d.kill9();
    await writeFile(file, original);
    const once = start(['--once', '--debounce-ms', '0'], { TEST_AGENT_MODE: 'hold' });
    expect(await once.exited).toBe(0);
    const text = await read(file);
    expect(text).toContain('#claimed-fix');
    expect(text).toContain(`**Session**: ${agent!.session.slice(t.root.length + 1)}`);
    expect(agentStarts(t)).toHaveLength(1);
  });

  it('treats #claimed-X beside #done-X as done, never requeues it', async () => {
    t = await makeRoot();
    const file = join(t.sessions, 'DONE.md');
    const text =
      '# D\n**Tags**: #claimed-fix #done-fix\n**Session**: sessions/2020_01_01_000000_FIX_d_abcd\n';
    await writeFile(file, text);
    const once = start(['--once', '--claim-grace-ms', '0']);
    expect(await once.exited).toBe(0);
    expect(await read(file)).toBe(text);
  });

  it('leaves a human claim alone when its body shows a Session line inside a code fence', async () => {
    t = await makeRoot();
    const file = join(t.sessions, 'HUMAN.md');
    const text = [
      '# Fix by hand',
      '**Tags**: #claimed-fix',
      '',
      'The daemon writes lines like these:',
      '',
      '```markdown',
      '**Tags**: #claimed-fix',
      '**Session**: sessions/2026_01_01_000000_FIX_example_abcd/',
      '```',
      '',
    ].join('\n');
    await writeFile(file, text);
    const once = start(['--once', '--claim-grace-ms', '0']);
    expect(await once.exited).toBe(0);
    expect(await read(file)).toBe(text);
    expect(once.output()).not.toMatch(/requeue/i);
  });

  it('claims and requeues a front-matter-only request in place, leaving its layout as it was', async () => {
    t = await makeRoot();
    const d = start(['--claim-grace-ms', '0'], { TEST_AGENT_MODE: 'exit' });
    await waitForReady(d);
    const file = join(t.sessions, 'FM.md');
    const text = '---\ntags: [delegated-fix, P1]\n---\n# Front matter only\n\nBody.\n';
    await writeFile(file, text);
    await waitFor(async () => (await read(file)).includes('## Recovery'));
    const after = await read(file);
    expect(after.slice(0, after.indexOf('## Recovery')).trimEnd()).toBe(
      text.replace('delegated-fix', 'needs-fix').trimEnd(),
    );
    expect(after).not.toContain('**Tags**');
  });

  it('names the file and line of a malformed front matter in its log', async () => {
    t = await makeRoot();
    const d = start();
    await waitForReady(d);
    await writeFile(
      join(t.sessions, 'BAD.md'),
      '---\ntitle: x\ntags: [delegated-fix\n---\n# Bad front matter\n',
    );
    await waitFor(() => /BAD\.md:\d+: front matter is not valid YAML/.test(d.output()));
  });

  it('lets exactly one of several daemons started at once take the root', async () => {
    t = await makeRoot();
    const children = Array.from({ length: 5 }, () =>
      spawn(
        process.execPath,
        [
          CLI,
          'run',
          '--monitor-tags',
          '--root',
          t.root,
          '--tmux-socket',
          t.socket,
          '--agent-cmd',
          AGENT_CMD,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      ),
    );
    const outputs = children.map((child) => {
      let out = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      return () => out;
    });
    try {
      await waitFor(
        () =>
          outputs.filter((o) => /INFO {2}monitoring |ERROR: another daemon/.test(o())).length === 5,
        {
          message: 'every daemon decided',
        },
      );
      expect(outputs.filter((o) => o().includes('INFO  monitoring ')).length).toBe(1);
      expect(outputs.filter((o) => o().includes('ERROR: another daemon')).length).toBe(4);
    } finally {
      for (const child of children) child.kill('SIGKILL');
    }
  });

  it('dispatches an item approved again while its dead claim was still ending', async () => {
    t = await makeRoot();
    const pauses = join(t.root, 'pauses');
    mkdirSync(pauses);
    // The daemon stops right before its first requeue, having judged the claim dead.
    const d = start([], {
      TEST_AGENT_MODE: 'hold',
      ENGINE_PAUSEPOINT: 'before-requeue',
      ENGINE_PAUSE_DIR: pauses,
    });
    await waitForReady(d);
    const file = join(t.sessions, 'AGAIN.md');
    await writeFile(file, '# A\n**Tags**: #delegated-fix\n\nHuman text.\n');
    const [agent] = await waitFor(() => agentStarts(t).length === 1 && agentStarts(t));
    const claimed = await waitFor(async () => {
      const now = await read(file);
      return now.includes('**Session**:') ? now : null;
    });
    process.kill(agent!.pid, 'SIGKILL');
    await waitFor(() => existsSync(join(pauses, 'before-requeue.paused')), {
      message: `the requeue to pause; ${d.output().slice(-2000)}`,
    });
    // Meanwhile a human approves the item again, in an editor.
    await writeFile(
      file,
      claimed.replace('#claimed-fix', '#delegated-fix').replace(/\*\*Session\*\*:.*\n/, ''),
    );
    await waitFor(() => d.output().includes(`held ${file} #delegated-fix`), {
      message: `the approval held; ${d.output().slice(-2000)}`,
    });
    writeFileSync(join(pauses, 'before-requeue.resume'), '');
    // Nothing changes the file once the claim has ended: the held approval alone dispatches it.
    const [, second] = await waitFor(() => agentStarts(t).length === 2 && agentStarts(t), {
      message: `a second agent; ${d.output().slice(-2000)}`,
    });
    expect(second!.session).not.toBe(agent!.session);
    await release(second!.session);
    await waitFor(async () => (await read(file)).includes('#done-fix'));
    expect(await read(file)).toContain('Human text.');
  });
});
