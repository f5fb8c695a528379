/**
 * `engine doctor` end to end through the built CLI, on this machine, with HOME, PATH and the
 * project in temporary directories and a stand-in `claude` that prints a version.
 */
import { execFileSync } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CheckResult } from '../../src/doctor/doctor-check.js';
import { runCli } from '../helpers/run-cli.js';

const KEY = 'sk-ant-api03-doctor-test-key-0123456789abcdef';

describe('engine doctor', () => {
  let base: string;
  let root: string;
  let env: NodeJS.ProcessEnv;

  beforeEach(async () => {
    base = realpathSync(await mkdtemp(join(tmpdir(), 'engine-doctor-cli-')));
    root = join(base, 'proj');
    const home = join(base, 'home');
    const bin = join(base, 'bin');
    await mkdir(join(root, 'directives'), { recursive: true });
    await mkdir(join(root, 'sessions'));
    await mkdir(join(home, '.claude'), { recursive: true });
    await mkdir(bin);
    await copyFile('directives/TAGS.md', join(root, 'directives', 'TAGS.md'));
    await writeFile(
      join(home, '.claude.json'),
      JSON.stringify({
        hasCompletedOnboarding: true,
        projects: { [root]: { hasTrustDialogAccepted: true } },
        customApiKeyResponses: { approved: [KEY.slice(-20)], rejected: [] },
      }),
    );
    await writeFile(
      join(home, '.claude', 'settings.json'),
      JSON.stringify({ disableAutoMode: 'disable', permissions: { allow: ['Bash'] } }),
    );
    await writeFile(join(bin, 'claude'), '#!/bin/sh\necho "2.1.330 (Claude Code)"\n');
    await chmod(join(bin, 'claude'), 0o755);
    await symlink(execFileSync('which', ['tmux'], { encoding: 'utf8' }).trim(), join(bin, 'tmux'));
    // A tmux server name no server uses: the check must not read the user's default server.
    const socket = `engine-doctor-${process.pid}-${Date.now()}`;
    env = { HOME: home, PATH: bin, ANTHROPIC_API_KEY: KEY, ENGINE_TMUX_SOCKET: socket };
  });

  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  const checksOf = (stdout: string): Map<string, CheckResult> =>
    new Map((JSON.parse(stdout) as CheckResult[]).map((r) => [r.id, r]));

  it('a ready set-up: exit 0, PASS lines, a WARN with its fix (no notify-send on PATH)', async () => {
    const run = await runCli(['doctor', '--root', root], { cwd: base, env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^PASS {2}agent-program {7}Claude Code 2\.1\.330 at /m);
    expect(run.stdout).toMatch(/^WARN {2}notify-send .*\n {26}fix: install notify-send/m);
    expect(run.stdout).toMatch(/17 checks: \d+ PASS, \d+ WARN, 0 FAIL, \d+ SKIP/);
    expect(run.stdout).not.toContain(KEY.slice(-20));
  });

  it('--json: the same checks as {id, status, summary, fix}', async () => {
    const run = await runCli(['doctor', '--json'], { cwd: root, env });
    expect(run.code).toBe(0);
    const checks = checksOf(run.stdout);
    expect([...checks.keys()]).toEqual([
      'node',
      'tmux',
      'agent-program',
      'claude-first-run',
      'claude-trust',
      'claude-permissions',
      'claude-auth',
      'claude-transcripts',
      'notify-send',
      'inotify',
      'tags-md',
      'settings',
      'daemon-lock',
      'control-socket',
      'tmux-env',
      'clock',
      'claims-remote',
    ]);
    for (const check of checks.values())
      expect(Object.keys(check)).toEqual(['id', 'status', 'summary', 'fix']);
    expect(checks.get('tmux-env')?.summary).toContain('is not running');
  });

  it('no claude on PATH: exit 1, the FAIL and its fix, and the failed checks on stderr', async () => {
    await rm(join(base, 'bin', 'claude'));
    const run = await runCli(['doctor', '--root', root, '--json'], { cwd: base, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('ERROR: 1 check(s) FAIL: agent-program\n');
    expect(checksOf(run.stdout).get('agent-program')).toMatchObject({
      status: 'FAIL',
      fix: expect.stringContaining('npm install -g @anthropic-ai/claude-code'),
    });
  });

  it('outside a project: exit 1 and how to make one; a --root that is none is an error', async () => {
    const outside = await runCli(['doctor'], { cwd: base, env });
    expect(outside.code).toBe(1);
    expect(outside.stdout).toMatch(
      /^FAIL {2}tags-md .*\n.*fix: run engine init here, or give --root DIR/m,
    );
    const wrong = await runCli(['doctor', '--root', base], { cwd: base, env });
    expect(wrong).toMatchObject({ code: 1, stdout: '' });
    expect(wrong.stderr).toContain('is not an engine project');
  });
});
