/**
 * `engine doctor` against the real Claude Code CLI: it finds the program and its version, and
 * reads the first-run, trust, key and permission state from the files the CLI itself reads. The
 * settled set-up here (settleFirstRun) is the one under which the interactive tests see the real
 * CLI go straight to its prompt, so doctor's PASS is checked against the CLI's own behaviour.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, copyFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { expect, it } from 'vitest';
import { claudeBin, useClaudeSandbox } from '../helpers/claude-env.js';
import { runCli } from '../helpers/run-cli.js';

const claude = useClaudeSandbox();

interface Check {
  id: string;
  status: string;
  summary: string;
  fix?: string;
}

async function doctor(root: string): Promise<{ code: number | null; checks: Map<string, Check> }> {
  const env = {
    ...process.env,
    ...claude.sandbox.env(),
    PATH: `${dirname(claudeBin())}:${claude.sandbox.env().PATH}`,
    // A tmux server name no server uses: the check must not read the user's default server.
    ENGINE_TMUX_SOCKET: `engine-doctor-claude-${process.pid}`,
  };
  const run = await runCli(['doctor', '--json', '--root', root], { env });
  const checks = JSON.parse(run.stdout) as Check[];
  return { code: run.code, checks: new Map(checks.map((c) => [c.id, c])) };
}

it('finds the real CLI and its version, and reads its first-run, trust and key state', async () => {
  const root = await claude.sandbox.dir('proj');
  await mkdir(join(root, 'directives'));
  await mkdir(join(root, 'sessions'));
  await copyFile('directives/TAGS.md', join(root, 'directives', 'TAGS.md'));
  const version = execFileSync(claudeBin(), ['--version'], { encoding: 'utf8' }).trim();
  const number = /\d+\.\d+\.\d+/.exec(version)![0];

  const fresh = await doctor(root);
  expect(fresh.checks.get('agent-program')).toMatchObject({ status: 'PASS' });
  expect(fresh.checks.get('agent-program')!.summary).toContain(number);
  expect(fresh.checks.get('claude-first-run')!.status).toBe('FAIL');
  expect(fresh.checks.get('claude-trust')!.status).toBe('FAIL');
  expect(fresh.code).toBe(1);

  await claude.sandbox.settleFirstRun(root);
  const settled = await doctor(root);
  for (const id of ['agent-program', 'claude-first-run', 'claude-trust', 'claude-auth']) {
    expect(settled.checks.get(id), JSON.stringify(settled.checks.get(id))).toMatchObject({
      status: 'PASS',
    });
  }
  expect(settled.checks.get('claude-permissions')!.status).not.toBe('FAIL');
});
