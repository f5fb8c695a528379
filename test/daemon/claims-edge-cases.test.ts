import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  read,
  release,
  rootArgs,
  useDaemonHarness,
  waitForReady,
  waitForText,
} from '../helpers/daemon-harness.js';
import { CLI } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';

const h = useDaemonHarness();

describe('claims: edge cases', () => {
  it('runs two delegated nouns of one file one after the other, each exactly once', async () => {
    const d = h.start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = await h.request(
      'TWO.md',
      '# Two\n**Tags**: #delegated-fix #delegated-implementation\n',
    );
    const [first] = await h.waitForAgents(1);
    const text = await read(file);
    expect(text.match(/#claimed-/g)).toHaveLength(1);
    expect(text.match(/\*\*Session\*\*:/g)).toHaveLength(1);
    await release(first!.session);
    const [, second] = await h.waitForAgents(2);
    expect(second!.noun).not.toBe(first!.noun);
    await release(second!.session);
    await waitForText(file, (text) => text.match(/#done-/g)?.length === 2);
    expect(h.agents()).toHaveLength(2);
  });

  it('keeps watching a claim whose Session line an agent moved down, and requeues it when the agent dies', async () => {
    const d = h.start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = await h.request('MOVED.md', '# M\n**Tags**: #delegated-fix\n');
    const [agent] = await h.waitForAgents(1);
    const claimed = await waitForText(file, '**Session**:');
    await writeFile(
      file,
      claimed.replace('**Tags**: #claimed-fix\n', '**Tags**: #claimed-fix\n**Status**: working\n'),
    );
    process.kill(agent!.pid, 'SIGKILL');
    const requeued = await waitForText(file, '#needs-fix');
    expect(requeued).toContain('**Status**: working');
    expect(requeued).toContain('## Recovery');
  });

  it('--once restores a claim an editor overwrote instead of starting a second agent', async () => {
    const d = h.start([], { TEST_AGENT_MODE: 'hold' });
    await waitForReady(d);
    const file = h.file('REQ.md');
    const original = '# R\n**Tags**: #delegated-fix\n';
    await writeFile(file, original);
    const [agent] = await h.waitForAgents(1);
    await waitForText(file, '**Session**:');
    await d.kill9();
    await writeFile(file, original);
    const once = h.start(['--once', '--debounce-ms', '0'], { TEST_AGENT_MODE: 'hold' });
    expect(await once.exited).toBe(0);
    const text = await read(file);
    expect(text).toContain('#claimed-fix');
    expect(text).toContain(`**Session**: ${agent!.session.slice(h.root.length + 1)}`);
    expect(h.agents()).toHaveLength(1);
  });

  it('treats #claimed-X beside #done-X as done, never requeues it', async () => {
    const file = h.file('DONE.md');
    const text =
      '# D\n**Tags**: #claimed-fix #done-fix\n**Session**: sessions/2020_01_01_000000_FIX_d_abcd\n';
    await writeFile(file, text);
    const once = h.start(['--once', '--claim-grace-ms', '0']);
    expect(await once.exited).toBe(0);
    expect(await read(file)).toBe(text);
  });

  it('leaves a human claim alone when its body shows a Session line inside a code fence', async () => {
    const file = h.file('HUMAN.md');
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
    const once = h.start(['--once', '--claim-grace-ms', '0']);
    expect(await once.exited).toBe(0);
    expect(await read(file)).toBe(text);
    expect(once.output()).not.toMatch(/requeue/i);
  });

  it('claims and requeues a front-matter-only request in place, leaving its layout as it was', async () => {
    const d = h.start(['--claim-grace-ms', '0'], { TEST_AGENT_MODE: 'exit' });
    await waitForReady(d);
    const file = h.file('FM.md');
    const text = '---\ntags: [delegated-fix, P1]\n---\n# Front matter only\n\nBody.\n';
    await writeFile(file, text);
    await waitForText(file, '## Recovery');
    const after = await read(file);
    expect(after.slice(0, after.indexOf('## Recovery')).trimEnd()).toBe(
      text.replace('delegated-fix', 'needs-fix').trimEnd(),
    );
    expect(after).not.toContain('**Tags**');
  });

  it('names the file and line of a malformed front matter in its log', async () => {
    const d = h.start();
    await waitForReady(d);
    await writeFile(
      h.file('BAD.md'),
      '---\ntitle: x\ntags: [delegated-fix\n---\n# Bad front matter\n',
    );
    await waitFor(() => /BAD\.md:\d+: front matter is not valid YAML/.test(d.output()));
  });

  it('lets exactly one of several daemons started at once take the root', async () => {
    const children = Array.from({ length: 5 }, () =>
      spawn(process.execPath, [CLI, 'run', '--monitor-tags', ...rootArgs(h.testRoot)], {
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
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
    const pauses = join(h.root, 'pauses');
    mkdirSync(pauses);
    // The daemon stops right before its first requeue, having judged the claim dead.
    const d = h.start([], {
      TEST_AGENT_MODE: 'hold',
      ENGINE_PAUSEPOINT: 'before-requeue',
      ENGINE_PAUSE_DIR: pauses,
    });
    await waitForReady(d);
    const file = await h.request('AGAIN.md', '# A\n**Tags**: #delegated-fix\n\nHuman text.\n');
    const [agent] = await h.waitForAgents(1);
    const claimed = await waitForText(file, '**Session**:');
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
    const [, second] = await waitFor(() => h.agents().length === 2 && h.agents(), {
      message: `a second agent; ${d.output().slice(-2000)}`,
    });
    expect(second!.session).not.toBe(agent!.session);
    await release(second!.session);
    await waitForText(file, '#done-fix');
    expect(await read(file)).toContain('Human text.');
  });
});
