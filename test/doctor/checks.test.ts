/**
 * Each check of `engine doctor`, made to fail (or warn) through an injected probe, with the fix
 * it gives; and passing where the set-up is right.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentLaunch, checkAgentProgram } from '../../src/doctor/agent-program.js';
import { checkAuth, checkCleanup } from '../../src/doctor/claude-account.js';
import {
  checkOnboarding,
  checkPermissions,
  checkTrust,
  readClaudeFacts,
} from '../../src/doctor/claude-checks.js';
import { doctorExitCode, type DoctorContext } from '../../src/doctor/doctor-check.js';
import {
  checkControlSocket,
  checkDaemonLock,
  checkSettings,
  checkTagsMd,
} from '../../src/doctor/project-checks.js';
import {
  checkClock,
  checkInotify,
  checkNotifySend,
  INSTANCES_FILE,
  WATCHES_FILE,
} from '../../src/doctor/system-checks.js';
import { checkTmuxEnvironment } from '../../src/doctor/tmux-env.js';
import { checkNode, checkTmux } from '../../src/doctor/versions.js';
import { HOME, ROOT, contextOf, json, probeOf } from './doctor-context.js';
import { serviceName } from '../../src/service/service-unit.js';

const GLOBAL = `${HOME}/.claude.json`;
const USER_SETTINGS = `${HOME}/.claude/settings.json`;
const ready = json({
  hasCompletedOnboarding: true,
  projects: { [ROOT]: { hasTrustDialogAccepted: true } },
});

async function claudeCheck(
  check: (ctx: DoctorContext, facts: Awaited<ReturnType<typeof readClaudeFacts>>) => unknown,
  ctx: DoctorContext,
  version: string | null = '2.1.330',
): Promise<unknown> {
  return check(ctx, await readClaudeFacts(ctx, version));
}

describe('versions', () => {
  it('node: older than engines.node fails, with the version to install', () => {
    const old = checkNode(contextOf({ probe: probeOf({}, { nodeVersion: '18.19.0' }) }));
    expect(old).toMatchObject({
      status: 'FAIL',
      summary: expect.stringContaining('older than the 20.19'),
    });
    expect(old.fix).toContain('install Node 20.19 or newer');
    expect(checkNode(contextOf()).status).toBe('PASS');
  });

  it('tmux: missing or too old fails, untested warns, each with how to install it', async () => {
    const missing = await checkTmux(contextOf({ probe: probeOf({}, { findProgram: () => null }) }));
    expect(missing).toMatchObject({
      status: 'FAIL',
      summary: expect.stringContaining('not on PATH'),
    });
    expect(missing.fix).toContain('install tmux 3.3');
    const version = (v: string) =>
      probeOf({}, { run: async () => ({ ok: true, stdout: `tmux ${v}\n` }) });
    expect((await checkTmux(contextOf({ probe: version('2.3') }))).status).toBe('FAIL');
    expect((await checkTmux(contextOf({ probe: version('3.0a') }))).status).toBe('WARN');
    expect(await checkTmux(contextOf())).toMatchObject({ status: 'PASS', summary: 'tmux 3.3a' });
    expect((await checkTmux(contextOf({ settings: { runner: 'pty' } }))).status).toBe('SKIP');
  });
});

describe('the agent program', () => {
  it('fails when claude is not on PATH, or its --version fails', async () => {
    const gone = await checkAgentProgram(
      contextOf({ probe: probeOf({}, { findProgram: () => null }) }),
    );
    expect(gone.result).toMatchObject({
      status: 'FAIL',
      summary: 'claude (the claude agent) is not on PATH',
    });
    expect(gone.result.fix).toContain('npm install -g @anthropic-ai/claude-code');
    const broken = probeOf({}, { run: async () => ({ ok: false, reason: 'Segmentation fault' }) });
    const failed = await checkAgentProgram(contextOf({ probe: broken }));
    expect(failed.result).toMatchObject({
      status: 'FAIL',
      summary: expect.stringContaining('Segmentation fault'),
    });
    const ok = await checkAgentProgram(contextOf());
    expect(ok).toEqual({ result: expect.objectContaining({ status: 'PASS' }), version: '2.1.330' });
  });

  it('names the custom agent command and its setting', async () => {
    const ctx = contextOf({
      agent: agentLaunch('custom', 'my-agent', ['my-agent', '{file}']),
      probe: probeOf({}, { findProgram: () => null }),
    });
    const { result } = await checkAgentProgram(ctx);
    expect(result.status).toBe('FAIL');
    expect(result.fix).toContain('"agentCommand"');
  });
});

describe("Claude Code's first run and trust", () => {
  it('first run: no .claude.json, or hasCompletedOnboarding not true, fails', async () => {
    const none = await claudeCheck(checkOnboarding, contextOf());
    expect(none).toMatchObject({
      status: 'FAIL',
      fix: 'run claude once in a terminal and finish its first-run screens',
    });
    const half = contextOf({
      probe: probeOf({ [GLOBAL]: json({ hasCompletedOnboarding: false }) }),
    });
    expect(await claudeCheck(checkOnboarding, half)).toMatchObject({
      status: 'FAIL',
      summary: expect.stringContaining('hasCompletedOnboarding'),
    });
    expect(
      await claudeCheck(checkOnboarding, contextOf({ probe: probeOf({ [GLOBAL]: ready }) })),
    ).toMatchObject({ status: 'PASS' });
    const print = contextOf({ agent: agentLaunch('claude-print', 'claude') });
    expect(await claudeCheck(checkOnboarding, print)).toMatchObject({ status: 'SKIP' });
  });

  it('CLAUDE_CONFIG_DIR moves .claude.json', async () => {
    const moved = contextOf({
      env: { CLAUDE_CONFIG_DIR: '/cfg' },
      probe: probeOf({ '/cfg/.claude.json': ready }),
    });
    expect(await claudeCheck(checkOnboarding, moved)).toMatchObject({
      status: 'PASS',
      summary: 'first run done (/cfg/.claude.json)',
    });
  });

  it("trust: a folder not trusted fails with the command that trusts it; a parent's trust counts", async () => {
    const other = json({
      hasCompletedOnboarding: true,
      projects: { '/elsewhere': { hasTrustDialogAccepted: true } },
    });
    const not = await claudeCheck(checkTrust, contextOf({ probe: probeOf({ [GLOBAL]: other }) }));
    expect(not).toMatchObject({
      status: 'FAIL',
      fix: `cd ${ROOT} && claude, and answer "Yes, I trust this folder"`,
    });
    const parent = json({ projects: { '/work': { hasTrustDialogAccepted: true } } });
    expect(
      await claudeCheck(checkTrust, contextOf({ probe: probeOf({ [GLOBAL]: parent }) })),
    ).toMatchObject({
      status: 'PASS',
      summary: `${ROOT} is trusted through /work`,
    });
  });

  it('trust with git claims: the checkouts, where agents work, must be trusted too', async () => {
    const git = (projects: Record<string, unknown>) =>
      contextOf({
        env: { PATH: '/usr/bin', XDG_STATE_HOME: '/state' },
        settings: { claims: 'git' },
        probe: probeOf({ [GLOBAL]: json({ projects }) }),
      });
    const rootOnly = await claudeCheck(
      checkTrust,
      git({ '/work': { hasTrustDialogAccepted: true } }),
    );
    expect(rootOnly).toMatchObject({
      status: 'FAIL',
      summary:
        "/state/engine/checkouts (git claims: agents' worktrees) is not trusted by Claude Code: each agent would wait on the trust question (default No)",
      fix: 'mkdir -p /state/engine/checkouts && cd /state/engine/checkouts && claude, and answer "Yes, I trust this folder"',
    });
    const both = {
      '/work': { hasTrustDialogAccepted: true },
      '/state': { hasTrustDialogAccepted: true },
    };
    const spaced = contextOf({
      env: { PATH: '/usr/bin', XDG_STATE_HOME: "/my state's" },
      settings: { claims: 'git' },
      probe: probeOf({
        [GLOBAL]: json({ projects: { '/work': { hasTrustDialogAccepted: true } } }),
      }),
    });
    expect(await claudeCheck(checkTrust, spaced)).toMatchObject({
      fix: `mkdir -p '/my state'\\''s/engine/checkouts' && cd '/my state'\\''s/engine/checkouts' && claude, and answer "Yes, I trust this folder"`,
    });
    expect(await claudeCheck(checkTrust, git(both))).toMatchObject({
      status: 'PASS',
      summary: `${ROOT} is trusted through /work; /state/engine/checkouts is trusted through /state`,
    });
  });
});

describe('permissions: will an unattended Bash call wait?', () => {
  const withSettings = (settings: object, env: NodeJS.ProcessEnv = {}) =>
    contextOf({ env, probe: probeOf({ [USER_SETTINGS]: json(settings) }) });

  it('manual mode without Bash allowed warns, with the allow rule to add', async () => {
    const result = await claudeCheck(
      checkPermissions,
      withSettings({ disableAutoMode: 'disable' }),
    );
    expect(result).toMatchObject({
      status: 'WARN',
      summary: expect.stringContaining('Bash is not allowed'),
    });
    expect((result as { fix: string }).fix).toContain(
      `add "Bash" to permissions.allow in ${ROOT}/.claude/settings.json`,
    );
    const allowed = withSettings({ disableAutoMode: 'disable', permissions: { allow: ['Bash'] } });
    expect(await claudeCheck(checkPermissions, allowed)).toMatchObject({ status: 'PASS' });
  });

  it('auto mode (the default from 2.1.283) through a gateway warns', async () => {
    const gateway = withSettings(
      { permissions: { allow: ['Bash'] } },
      { ANTHROPIC_BASE_URL: 'http://gw' },
    );
    const result = await claudeCheck(checkPermissions, gateway);
    expect(result).toMatchObject({
      status: 'WARN',
      summary: expect.stringContaining('auto mode through ANTHROPIC_BASE_URL'),
    });
    expect((result as { fix: string }).fix).toContain('"disableAutoMode": "disable"');
    // An older Claude Code does not start in auto mode: the allow rule decides.
    expect(await claudeCheck(checkPermissions, gateway, '2.1.200')).toMatchObject({
      status: 'PASS',
    });
  });

  it('Bash denied, or bypassPermissions as root, fails', async () => {
    const denied = await claudeCheck(
      checkPermissions,
      withSettings({ permissions: { deny: ['Bash'] } }),
    );
    expect(denied).toMatchObject({
      status: 'FAIL',
      fix: expect.stringContaining('remove "Bash" from permissions.deny'),
    });
    for (const rule of ['Bash(engine:*)', 'Bash(engine tag swap:*)', 'Bash(engine *)'])
      expect(
        await claudeCheck(checkPermissions, withSettings({ permissions: { deny: [rule] } })),
      ).toMatchObject({ status: 'FAIL', summary: expect.stringContaining(rule) });
    for (const rule of ['Bash(rm:*)', 'Bash(engine stop:*)', 'Read(engine)'])
      expect(
        await claudeCheck(
          checkPermissions,
          withSettings({ permissions: { deny: [rule], allow: ['Bash'] } }),
        ),
      ).not.toMatchObject({ status: 'FAIL' });
    const bypass = { permissions: { defaultMode: 'bypassPermissions' } };
    const root = contextOf({ probe: probeOf({ [USER_SETTINGS]: json(bypass) }, { uid: 0 }) });
    expect(await claudeCheck(checkPermissions, root)).toMatchObject({
      status: 'FAIL',
      summary: expect.stringContaining('refuses it as root'),
    });
    expect(await claudeCheck(checkPermissions, withSettings(bypass))).toMatchObject({
      status: 'PASS',
    });
  });

  it('a custom command that runs claude is judged by its flags: claude -p without Bash allowed fails', async () => {
    const custom = (words: string[]) =>
      contextOf({ agent: agentLaunch('custom', 'claude', words) });
    const denied = await claudeCheck(
      checkPermissions,
      custom(['claude', '-p', '--', '{skill} {file}']),
    );
    expect(denied).toMatchObject({
      status: 'FAIL',
      summary: expect.stringContaining('claude -p and Bash is not allowed'),
    });
    expect((denied as { fix: string }).fix).toBe(
      `add "Bash" to permissions.allow in ${ROOT}/.claude/settings.json`,
    );
    const allowed = custom(['claude', '-p', '--allowedTools', 'Bash,Edit', '--', '{skill} {file}']);
    expect(await claudeCheck(checkPermissions, allowed)).toMatchObject({ status: 'PASS' });
    const other = contextOf({ agent: agentLaunch('custom', 'aider', ['aider', '{file}']) });
    expect(await claudeCheck(checkPermissions, other)).toMatchObject({ status: 'SKIP' });
  });

  it('a settings file that is not JSON warns, naming it', async () => {
    const ctx = contextOf({ probe: probeOf({ [USER_SETTINGS]: '{"permissions": ' }) });
    const result = await claudeCheck(checkPermissions, ctx);
    expect(result).toMatchObject({
      status: 'WARN',
      summary: expect.stringContaining(USER_SETTINGS),
    });
  });

  it('claude-print is given --allowedTools Bash', async () => {
    const ctx = contextOf({ agent: agentLaunch('claude-print', 'claude') });
    expect(await claudeCheck(checkPermissions, ctx)).toMatchObject({ status: 'PASS' });
  });
});

describe('the key or login', () => {
  const KEY = 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789';

  it('none fails with how to log in; a login in the credentials file passes', async () => {
    const none = await claudeCheck(checkAuth, contextOf());
    expect(none).toMatchObject({
      status: 'FAIL',
      fix: 'run claude and /login, or export ANTHROPIC_API_KEY before engine run',
    });
    const login = contextOf({
      probe: probeOf({
        [`${HOME}/.claude/.credentials.json`]: json({
          claudeAiOauth: { accessToken: 'secret-token' },
        }),
      }),
    });
    const passed = await claudeCheck(checkAuth, login);
    expect(passed).toMatchObject({
      status: 'PASS',
      summary: `a Claude login (${HOME}/.claude/.credentials.json)`,
    });
    expect(json(passed)).not.toContain('secret-token');
  });

  it('an API key not approved for interactive use warns, and its value is never shown', async () => {
    const result = await claudeCheck(checkAuth, contextOf({ env: { ANTHROPIC_API_KEY: KEY } }));
    expect(result).toMatchObject({
      status: 'WARN',
      summary: expect.stringContaining('not yet approved'),
    });
    expect(json(result)).not.toContain(KEY.slice(-20));
    const approved = json({ customApiKeyResponses: { approved: [KEY.slice(-20)], rejected: [] } });
    const ok = contextOf({
      env: { ANTHROPIC_API_KEY: KEY },
      probe: probeOf({ [GLOBAL]: approved }),
    });
    expect(await claudeCheck(checkAuth, ok)).toMatchObject({ status: 'PASS' });
    const rejected = json({ customApiKeyResponses: { rejected: [KEY.slice(-20)] } });
    const no = contextOf({
      env: { ANTHROPIC_API_KEY: KEY },
      probe: probeOf({ [GLOBAL]: rejected }),
    });
    expect(await claudeCheck(checkAuth, no)).toMatchObject({ status: 'FAIL' });
  });

  it('CLAUDE_CODE_OAUTH_TOKEN (claude setup-token) passes, its value never shown', async () => {
    const ctx = contextOf({ env: { CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-secret' } });
    const result = await claudeCheck(checkAuth, ctx);
    expect(result).toMatchObject({
      status: 'PASS',
      summary: expect.stringContaining('CLAUDE_CODE_OAUTH_TOKEN'),
    });
    expect(json(result)).not.toContain('secret');
  });

  it('a key only in the shell while a service unit is installed warns that the service lacks it', async () => {
    const unit = `${HOME}/.config/systemd/user/${serviceName(ROOT)}.service`;
    const env = { ANTHROPIC_AUTH_TOKEN: 'tok' };
    const result = await claudeCheck(
      checkAuth,
      contextOf({ env, probe: probeOf({ [unit]: 'x' }) }),
    );
    expect(result).toMatchObject({
      status: 'WARN',
      summary: expect.stringContaining(`the service (${unit}) leaves it out`),
    });
    // With a login stored as well, the service's agents have that: no warning.
    const login = probeOf({
      [unit]: 'x',
      [`${HOME}/.claude/.credentials.json`]: json({ claudeAiOauth: { accessToken: 'a' } }),
    });
    expect(await claudeCheck(checkAuth, contextOf({ env, probe: login }))).toMatchObject({
      status: 'PASS',
    });
  });

  it('apiKeyHelper in settings is named', async () => {
    const ctx = contextOf({
      probe: probeOf({ [USER_SETTINGS]: json({ apiKeyHelper: '/bin/key' }) }),
    });
    expect(await claudeCheck(checkAuth, ctx)).toMatchObject({
      status: 'PASS',
      summary: expect.stringContaining('apiKeyHelper'),
    });
  });
});

describe("transcripts kept (cleanupPeriodDays) against engine's retries", () => {
  it('0 fails; fewer days than the retries span warns, with the value to set', async () => {
    const days = (n: number, settings = {}) =>
      contextOf({ settings, probe: probeOf({ [USER_SETTINGS]: json({ cleanupPeriodDays: n }) }) });
    expect(await claudeCheck(checkCleanup, days(0))).toMatchObject({ status: 'FAIL' });
    // 10 retries from one hour, doubling: about 42 days.
    const long = await claudeCheck(
      checkCleanup,
      days(30, { retries: 10, retryBackoffMs: 3_600_000 }),
    );
    expect(long).toMatchObject({
      status: 'WARN',
      fix: `set "cleanupPeriodDays": 44 in ${USER_SETTINGS}`,
    });
    expect(await claudeCheck(checkCleanup, contextOf())).toMatchObject({
      status: 'PASS',
      summary: expect.stringContaining('30 days (the default)'),
    });
  });
});

describe('the machine', () => {
  it('notify-send missing while desktop notifications are on warns', () => {
    const result = checkNotifySend(contextOf({ probe: probeOf({}, { findProgram: () => null }) }));
    expect(result).toMatchObject({
      status: 'WARN',
      fix: expect.stringContaining('"notifyVia": "tmux"'),
    });
    expect(checkNotifySend(contextOf({ settings: { notifyVia: ['tmux'] } })).status).toBe('SKIP');
  });

  it('inotify: a tree past the watch limit fails, near it warns, few instances warn', async () => {
    const limits = (watches: string, instances: string, needed: number) =>
      contextOf({
        probe: probeOf(
          { [WATCHES_FILE]: watches, [INSTANCES_FILE]: instances },
          { watchesNeeded: async () => needed },
        ),
      });
    const over = await checkInotify(limits('8192\n', '128\n', 9000));
    expect(over).toMatchObject({
      status: 'FAIL',
      summary: expect.stringContaining('limit is 8192'),
    });
    expect(over.fix).toContain('fs.inotify.max_user_watches=524288');
    expect((await checkInotify(limits('8192\n', '128\n', 5000))).status).toBe('WARN');
    expect((await checkInotify(limits('8192\n', '8\n', 10))).status).toBe('WARN');
    expect((await checkInotify(limits('8192\n', '128\n', 10))).status).toBe('PASS');
  });

  it('clock: a file dated far from the clock fails, a little warns', async () => {
    const at = (mtime: number) =>
      contextOf({
        probe: probeOf(
          {},
          { writeStamp: async () => ({ before: 100_000, mtime, after: 100_010 }) },
        ),
      });
    const far = await checkClock(at(100_000 + 120_000));
    expect(far).toMatchObject({ status: 'FAIL', summary: expect.stringContaining('120.0 s late') });
    expect(far.fix).toContain('timedatectl set-ntp true');
    expect((await checkClock(at(95_000))).status).toBe('WARN');
    expect((await checkClock(at(100_005))).status).toBe('PASS');
  });

  it('the tmux server: a stale PATH or ANTHROPIC_* warns, naming variables, never values', async () => {
    const server = 'PATH=/old/bin\nHOME=/home/u\nANTHROPIC_API_KEY=old-secret\n-TMUX\n';
    const ctx = contextOf({
      env: { PATH: '/usr/bin', HOME: '/home/u', ANTHROPIC_API_KEY: 'new-secret' },
      settings: { tmuxSocket: 'work' },
      probe: probeOf(
        {},
        {
          run: async (_f, args) => (
            expect(args).toEqual(['-L', 'work', 'show-environment', '-g']),
            { ok: true, stdout: server }
          ),
        },
      ),
    });
    const result = await checkTmuxEnvironment(ctx);
    expect(result).toMatchObject({
      status: 'WARN',
      summary: expect.stringContaining('ANTHROPIC_API_KEY, PATH'),
    });
    expect(result.fix).toContain('tmux -L work kill-server');
    expect(json(result)).not.toMatch(/secret/);
    const none = probeOf(
      {},
      { run: async () => ({ ok: false, reason: 'no server running on /tmp/tmux-0/work' }) },
    );
    expect((await checkTmuxEnvironment(contextOf({ probe: none }))).status).toBe('PASS');
  });
});

describe('the project', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'engine-doctor-'));
    await mkdir(join(root, 'sessions', '.engine', 'control'), { recursive: true });
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('TAGS.md: a bad §TAG_DISPATCH fails with the parser line; no project fails with engine init', () => {
    const bad = checkTagsMd(
      contextOf({ root, table: { path: 'TAGS.md', text: '# Nothing here\n', shipped: false } }),
    );
    expect(bad).toMatchObject({ status: 'FAIL', summary: 'TAGS.md:1: no §TAG_DISPATCH section' });
    expect(bad.fix).toContain('§TAG_DISPATCH');
    expect(checkTagsMd(contextOf({ root: null }))).toMatchObject({
      status: 'FAIL',
      fix: 'run engine init here, or give --root DIR',
    });
  });

  it('settings: an invalid engine.json fails with its message', () => {
    const result = checkSettings(
      contextOf({ settingsError: 'engine.json: "maxAgents" must be a whole number' }),
    );
    expect(result).toMatchObject({ status: 'FAIL', summary: expect.stringContaining('maxAgents') });
    expect(result.fix).toContain('directives/engine.json');
  });

  it('a stale daemon lock warns, with the file to remove; a live one passes', async () => {
    const lock = join(root, 'sessions', '.engine', 'daemon.lock');
    await writeFile(lock, `${json({ pid: 4242, startTicks: '1', bootId: 'b', host: 'h' })}\n`);
    const stale = await checkDaemonLock(contextOf({ root }));
    expect(stale).toMatchObject({
      status: 'WARN',
      summary: 'stale lock: its daemon, pid 4242, is gone',
      fix: expect.stringContaining(`rm ${lock}`),
    });
    const live = contextOf({ root, probe: probeOf({}, { liveness: () => 'alive' }) });
    expect(await checkDaemonLock(live)).toMatchObject({
      status: 'PASS',
      summary: 'a daemon runs (pid 4242)',
    });
  });

  it('a control socket no daemon answers warns', async () => {
    const sock = join(root, 'sessions', '.engine', 'control', 'control.sock');
    const result = await checkControlSocket(
      contextOf({ root, probe: probeOf({}, { socketAnswers: async () => false }) }),
    );
    expect(result).toMatchObject({ status: 'WARN', fix: expect.stringContaining(`rm ${sock}`) });
    expect((await checkControlSocket(contextOf({ root }))).status).toBe('PASS');
  });
});

describe('the exit code', () => {
  it('is 1 when a check FAILs; WARN and SKIP leave it 0', () => {
    const r = (status: 'PASS' | 'WARN' | 'FAIL' | 'SKIP') => ({
      id: 'x',
      status,
      summary: '',
      fix: '',
    });
    expect(doctorExitCode([r('PASS'), r('WARN'), r('SKIP')])).toBe(0);
    expect(doctorExitCode([r('PASS'), r('FAIL')])).toBe(1);
  });
});
