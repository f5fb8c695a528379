import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  agentRun,
  PRINT_ALLOWED_TOOLS,
  priorSessionNote,
  type AgentTask,
} from '../../src/agents/agent-profile.js';
import { engineBinDir, pathWith, writeEngineShim } from '../../src/agents/engine-shim.js';
import { splitTemplate } from '../../src/dispatch/agent-command.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const HOSTILE = `sessions/it's a $(touch pwned) "x" \`y\` ;b.md`;

const task = (over: Partial<AgentTask> = {}): AgentTask => ({
  skill: '/fix',
  noun: 'fix',
  file: HOSTILE,
  sessionDir: '/r/sessions/s1',
  tag: '#claimed-fix',
  priorAgentSession: null,
  resume: false,
  running: null,
  ...over,
});

describe('agent profiles', () => {
  it('claude: interactive, a fresh UUID session id, the prompt one argument after --', () => {
    const run = agentRun({ kind: 'claude', claudeBin: '/bin/claude' }, task());
    expect(run.agentSessionId).toMatch(UUID);
    expect(run.argv).toEqual([
      '/bin/claude',
      '--session-id',
      run.agentSessionId,
      '--settings',
      '/r/sessions/s1/claude-settings.json',
      '--',
      `/fix ${HOSTILE}`,
    ]);
  });

  it('claude-print: stream-json, allowed tools, and the prompt after -- so no tool list swallows it', () => {
    const run = agentRun({ kind: 'claude-print', claudeBin: '/bin/claude' }, task());
    expect(run.agentSessionId).toMatch(UUID);
    expect(run.argv).toEqual([
      '/bin/claude',
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--session-id',
      run.agentSessionId,
      '--settings',
      '/r/sessions/s1/claude-settings.json',
      '--allowedTools',
      ...PRINT_ALLOWED_TOOLS,
      '--',
      `/fix ${HOSTILE}`,
    ]);
    expect(run.argv).not.toContain('--dangerously-skip-permissions');
    expect(run.argv.at(-2)).toBe('--');
  });

  it("a resume forks the prior conversation into the run's own new session id, in both profiles", () => {
    const prior = '11111111-2222-4333-8444-555555555555';
    for (const kind of ['claude', 'claude-print'] as const) {
      const run = agentRun(
        { kind, claudeBin: 'claude' },
        task({ priorAgentSession: prior, resume: true }),
      );
      expect(run.agentSessionId).toMatch(UUID);
      expect(run.agentSessionId).not.toBe(prior);
      const at = run.argv.indexOf('--session-id');
      expect(run.argv.slice(at, at + 2)).toEqual(['--session-id', run.agentSessionId]);
      const resume = run.argv.indexOf('--resume');
      expect(run.argv.slice(resume, resume + 3)).toEqual(['--resume', prior, '--fork-session']);
      expect(run.argv.slice(-2)).toEqual(['--', `/fix ${HOSTILE}`]);
      expect(run.argv).not.toContain('--append-system-prompt');
    }
  });

  it('a fresh run after a prior attempt names the prior session in the system prompt, not the prompt', () => {
    const prior = '11111111-2222-4333-8444-555555555555';
    for (const kind of ['claude', 'claude-print'] as const) {
      const run = agentRun({ kind, claudeBin: 'claude' }, task({ priorAgentSession: prior }));
      const at = run.argv.indexOf('--append-system-prompt');
      expect(run.argv[at + 1]).toBe(priorSessionNote(prior));
      expect(priorSessionNote(prior)).toContain(prior);
      expect(run.argv).not.toContain('--resume');
      expect(run.argv.slice(-2)).toEqual(['--', `/fix ${HOSTILE}`]);
    }
  });

  it('names the other running items in the system prompt, beside the prior-session note, in both profiles', () => {
    const prior = '11111111-2222-4333-8444-555555555555';
    const running = 'Other items run now (1): sessions/a.md (noun fix, host h1).';
    for (const kind of ['claude', 'claude-print'] as const) {
      const alone = agentRun({ kind, claudeBin: 'claude' }, task({ running }));
      const at = alone.argv.indexOf('--append-system-prompt');
      expect(alone.argv[at + 1]).toBe(running);
      const both = agentRun(
        { kind, claudeBin: 'claude' },
        task({ running, priorAgentSession: prior }),
      );
      const appended = both.argv.filter((word) => word === '--append-system-prompt');
      expect(appended).toHaveLength(1);
      const note = both.argv[both.argv.indexOf('--append-system-prompt') + 1];
      expect(note).toBe(`${priorSessionNote(prior)}\n\n${running}`);
      const resumed = agentRun(
        { kind, claudeBin: 'claude' },
        task({ running, priorAgentSession: prior, resume: true }),
      );
      expect(resumed.argv[resumed.argv.indexOf('--append-system-prompt') + 1]).toBe(running);
      expect(resumed.argv.slice(-2)).toEqual(['--', `/fix ${HOSTILE}`]);
    }
  });

  it('custom: {running} is the note, one argument, empty when nothing else runs', () => {
    const template = splitTemplate(`agent --context {running} {file}`);
    const running = 'Other items run now (1): sessions/a b.md (noun fix, host h1).';
    expect(agentRun({ kind: 'custom', template }, task({ running })).argv).toEqual([
      'agent',
      '--context',
      running,
      HOSTILE,
    ]);
    expect(agentRun({ kind: 'custom', template }, task()).argv[2]).toBe('');
  });

  it('gives each run its own session id', () => {
    const profile = { kind: 'claude', claudeBin: 'claude' } as const;
    const ids = new Set([1, 2, 3].map(() => agentRun(profile, task()).agentSessionId));
    expect(ids.size).toBe(3);
  });

  it('custom: no session id unless the template asks for one; the file stays one argument', () => {
    const plain = agentRun(
      { kind: 'custom', template: splitTemplate('agent --file {file}') },
      task(),
    );
    expect(plain).toEqual({ argv: ['agent', '--file', HOSTILE], agentSessionId: null });

    const template = splitTemplate(
      `agent --resume '{prior_agent_session}' --session-id {agent_session} '{skill} {file}'`,
    );
    const prior = '11111111-2222-4333-8444-555555555555';
    const run = agentRun({ kind: 'custom', template }, task({ priorAgentSession: prior }));
    expect(run.agentSessionId).toMatch(UUID);
    expect(run.argv).toEqual([
      'agent',
      '--resume',
      prior,
      '--session-id',
      run.agentSessionId,
      `/fix ${HOSTILE}`,
    ]);
    expect(agentRun({ kind: 'custom', template }, task()).argv[2]).toBe('');
  });
});

describe('the engine shim', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs the given node and main script with the caller arguments, whatever the paths hold', async () => {
    // A root whose name would run a command if it reached the script as text.
    dir = await mkdtemp(join(tmpdir(), `engine-shim-'$(touch pwned)' "x" `));
    const main = join(dir, `main's $(touch pwned).mjs`);
    const { writeFile } = await import('node:fs/promises');
    await writeFile(main, 'console.log(JSON.stringify(process.argv.slice(2)));\n');
    const bin = await writeEngineShim(dir, process.execPath, main);
    expect(bin).toBe(engineBinDir(dir));
    expect((await stat(join(bin, 'engine'))).mode & 0o111).toBe(0o111);
    const out = execFileSync('engine', ['tag', 'swap', 'a b', '$(x)'], {
      env: { ...process.env, PATH: pathWith(bin, process.env.PATH) },
      cwd: dir,
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual(['tag', 'swap', 'a b', '$(x)']);
    await expect(stat(join(dir, 'pwned'))).rejects.toThrow();
    await expect(stat('pwned')).rejects.toThrow();
    expect(await readFile(join(bin, 'engine'), 'utf8')).toMatch(/^#!\/bin\/sh\n/);
  });
});
