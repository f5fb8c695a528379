/**
 * Runs the real Claude Code CLI in a test, offline, against the Messages API stand-in
 * (messages-api.ts): a temporary HOME (Claude Code keeps its config and transcripts under
 * $HOME/.claude), the stand-in as its API, and an `engine` on PATH that is this repository's
 * build, so an agent's `engine tag swap` works. `npm run test:claude` installs the CLI and sets
 * ENGINE_TEST_CLAUDE_BIN (vitest.claude.config.ts).
 */
import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Children } from '../process/spawned.js';
import { shellQuote } from './daemon-harness.js';
import { afterEach, beforeEach } from 'vitest';
import { MessagesApi } from './messages-api.js';
import { CLI } from './run-cli.js';

/** The `claude` under test. */
export function claudeBin(): string {
  const bin = process.env.ENGINE_TEST_CLAUDE_BIN;
  if (!bin)
    throw new Error('ENGINE_TEST_CLAUDE_BIN is not set: run these tests with npm run test:claude');
  return bin;
}

/**
 * Flags for an unattended run. As root, --dangerously-skip-permissions is refused, so Bash is
 * allowed by name; --allowedTools takes several values, so a prompt must come before it or after
 * `--`.
 */
export const PRINT_FLAGS = [
  '-p',
  '--output-format',
  'stream-json',
  '--verbose',
  '--allowedTools',
  'Bash',
];

/** The API key the CLI is given; the stand-in accepts any. */
const API_KEY = 'sk-ant-api03-engine-test-key-0123456789';

/** One temporary HOME and `engine` shim; `cleanup()` removes both. */
export class ClaudeSandbox {
  private constructor(
    private readonly base: string,
    /** The HOME the CLI runs with. */
    readonly home: string,
    /** A directory holding only the `engine` shim, first on the CLI's PATH. */
    readonly binDir: string,
    private readonly api: MessagesApi,
  ) {}

  static async create(api: MessagesApi): Promise<ClaudeSandbox> {
    // The real path: the CLI names its transcript directory after the real working directory.
    const base = realpathSync(await mkdtemp(join(tmpdir(), 'engine-claude-')));
    const home = join(base, 'home');
    const binDir = join(base, 'bin');
    await mkdir(home);
    await mkdir(binDir);
    await writeFile(
      join(binDir, 'engine'),
      `#!/bin/sh\nexec ${shellQuote(process.execPath)} ${shellQuote(CLI)} "$@"\n`,
    );
    await chmod(join(binDir, 'engine'), 0o755);
    return new ClaudeSandbox(base, home, binDir, api);
  }

  /** A temporary directory under the sandbox, e.g. a working directory for the CLI. */
  async dir(name: string): Promise<string> {
    const dir = join(this.base, name);
    await mkdir(dir, { recursive: true });
    return dir;
  }

  /**
   * The entries to put over the test's own environment. Inherited ANTHROPIC_* and CLAUDE* settings
   * are blanked: a real token, model or provider of the machine must not reach the run.
   */
  env(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const key of Object.keys(process.env)) if (/^(ANTHROPIC_|CLAUDE)/.test(key)) env[key] = '';
    return {
      ...env,
      HOME: this.home,
      ANTHROPIC_BASE_URL: this.api.url,
      ANTHROPIC_API_KEY: API_KEY,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      PATH: `${this.binDir}${delimiter}${process.env.PATH ?? ''}`,
    };
  }

  /**
   * Settles what interactive Claude Code asks on a first run, so that it goes straight to the
   * prompt in a project in `cwd` (keys found in the CLI's own config handling, 2.1.330):
   * - `hasCompletedOnboarding`, `lastOnboardingVersion`, `theme`: no welcome, theme or
   *   connectivity check (which fails offline: "Unable to connect to Anthropic services");
   * - `customApiKeyResponses.approved`: the last 20 characters of ANTHROPIC_API_KEY, so it does
   *   not ask whether to use that key;
   * - `projects.<cwd>.hasTrustDialogAccepted`: the workspace is trusted;
   * - `hasSeenAutoDefaultNudge`: no "Make auto mode your default permission mode?" after a turn.
   * And in `.claude/settings.json`, the permission README suggests: Bash allowed (as root,
   * bypassing permissions is refused; a narrower `Bash(engine tag swap:*)` does not do: the CLI
   * asks about every command holding a variable, such as `"$ENGINE_REQUEST_FILE"`), in the manual
   * mode (auto mode's safety check runs on Anthropic's servers, out of the stand-in's reach).
   */
  async settleFirstRun(cwd: string): Promise<void> {
    const projects: Record<string, unknown> = {};
    for (const dir of new Set([cwd, realpathSync(cwd)]))
      projects[dir] = { hasTrustDialogAccepted: true };
    const config = {
      hasCompletedOnboarding: true,
      lastOnboardingVersion: '2.1.330',
      theme: 'dark',
      customApiKeyResponses: { approved: [API_KEY.slice(-20)], rejected: [] },
      hasSeenAutoDefaultNudge: true,
      projects,
    };
    await writeFile(join(this.home, '.claude.json'), JSON.stringify(config, null, 2));
    await mkdir(join(this.home, '.claude'), { recursive: true });
    await writeFile(
      join(this.home, '.claude', 'settings.json'),
      JSON.stringify({ permissions: { allow: ['Bash'], defaultMode: 'default' } }, null, 2),
    );
  }

  /** Where the CLI writes the transcript of a session run in `cwd`. */
  transcript(cwd: string, sessionId: string): string {
    return join(
      this.home,
      '.claude',
      'projects',
      cwd.replace(/[^a-zA-Z0-9]/g, '-'),
      `${sessionId}.jsonl`,
    );
  }

  async cleanup(): Promise<void> {
    await rm(this.base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  }
}

/** One line of `--output-format stream-json`. */
export interface StreamLine {
  type: string;
  subtype?: string;
  session_id?: string;
  [field: string]: unknown;
}

export interface ClaudeRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed, one object per line. */
  lines: StreamLine[];
}

/** Runs the CLI to its end; `children` kills it if the test ends first. */
export function runClaude(
  args: string[],
  options: { cwd: string; env: Record<string, string>; children: Children },
): Promise<ClaudeRun> {
  return new Promise((resolve, reject) => {
    const child = options.children.track(
      spawn(claudeBin(), args, {
        cwd: options.cwd,
        env: { ...process.env, ...options.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        resolve({ code, stdout, stderr, lines: parseStream(stdout) });
      } catch (error) {
        reject(new Error(`${String(error)}; stdout:\n${stdout}\nstderr:\n${stderr}`));
      }
    });
  });
}

export function parseStream(text: string): StreamLine[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as StreamLine);
}

/**
 * A fresh stand-in and sandbox for each test of the file (or of the describe block it is called
 * in), closed after it. Hooks registered after this one run before its closing one.
 */
export function useClaudeSandbox(): { readonly api: MessagesApi; readonly sandbox: ClaudeSandbox } {
  let api: MessagesApi | undefined;
  let sandbox: ClaudeSandbox | undefined;
  beforeEach(async () => {
    api = await MessagesApi.start();
    sandbox = await ClaudeSandbox.create(api);
  });
  afterEach(async () => {
    await api?.close();
    await sandbox?.cleanup();
  });
  return {
    get api() {
      return api as MessagesApi;
    },
    get sandbox() {
      return sandbox as ClaudeSandbox;
    },
  };
}
