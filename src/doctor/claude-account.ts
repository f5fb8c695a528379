/**
 * The key or login Claude Code will use (named, never shown), and whether it keeps transcripts
 * long enough for engine's retries to resume them.
 */
import type { ClaudeFacts } from './claude-checks.js';
import { fail, pass, skip, warn, type CheckResult, type DoctorContext } from './doctor-check.js';

const set = (value: string | undefined): boolean => value !== undefined && value !== '';

/** The answer interactive Claude Code recorded for this key (it keys them by the last 20 characters). */
function keyAnswer(facts: ClaudeFacts, key: string): 'approved' | 'rejected' | null {
  const global = 'value' in facts.global ? facts.global.value : null;
  const answers = (global?.customApiKeyResponses ?? {}) as {
    approved?: unknown;
    rejected?: unknown;
  };
  const has = (list: unknown): boolean => Array.isArray(list) && list.includes(key.slice(-20));
  if (has(answers.approved)) return 'approved';
  return has(answers.rejected) ? 'rejected' : null;
}

function apiKeyResult(ctx: DoctorContext, facts: ClaudeFacts, key: string): CheckResult {
  const id = 'claude-auth';
  if (ctx.agent.claude?.print !== false) return pass(id, 'the API key in ANTHROPIC_API_KEY');
  const fix = `run ${ctx.agent.program} once in a terminal with this ANTHROPIC_API_KEY and answer Yes to using it`;
  const answer = keyAnswer(facts, key);
  if (answer === 'rejected')
    return fail(id, 'ANTHROPIC_API_KEY is set, but Claude Code was told not to use this key', fix);
  if (answer === null)
    return warn(
      id,
      'ANTHROPIC_API_KEY is set, not yet approved: each interactive agent would ask whether to use it (default No)',
      fix,
    );
  return pass(id, 'the API key in ANTHROPIC_API_KEY (approved in Claude Code)');
}

/** A key or token in the environment, or null. */
function shellKeyResult(ctx: DoctorContext, facts: ClaudeFacts): CheckResult | null {
  const { env } = ctx;
  if (set(env.ANTHROPIC_API_KEY)) return apiKeyResult(ctx, facts, env.ANTHROPIC_API_KEY as string);
  if (set(env.ANTHROPIC_AUTH_TOKEN))
    return pass('claude-auth', 'the bearer token in ANTHROPIC_AUTH_TOKEN');
  if (set(env.CLAUDE_CODE_OAUTH_TOKEN))
    return pass('claude-auth', 'the login token in CLAUDE_CODE_OAUTH_TOKEN (claude setup-token)');
  return null;
}

/** A key helper in settings or a login in the credentials file, or null. */
function storedAuthResult(facts: ClaudeFacts): CheckResult | null {
  if (facts.settings.apiKeyHelper !== null)
    return pass(
      'claude-auth',
      `the key printed by apiKeyHelper (${facts.settings.read.join(', ')})`,
    );
  const credentials = 'value' in facts.credentials ? facts.credentials.value : null;
  if (credentials?.claudeAiOauth)
    return pass('claude-auth', `a Claude login (${facts.paths.credentials})`);
  return null;
}

export function checkAuth(ctx: DoctorContext, facts: ClaudeFacts): CheckResult {
  const id = 'claude-auth';
  if (ctx.agent.claude === null)
    return skip(id, 'a custom agent that is not claude: Claude Code is not used');
  const { env } = ctx;
  if (set(env.CLAUDE_CODE_USE_BEDROCK) || set(env.CLAUDE_CODE_USE_VERTEX))
    return pass(
      id,
      `the cloud provider's credentials (${set(env.CLAUDE_CODE_USE_BEDROCK) ? 'Bedrock' : 'Vertex'})`,
    );
  const shell = shellKeyResult(ctx, facts);
  const stored = storedAuthResult(facts);
  if (shell !== null) {
    // The service's unit leaves every key out (SERVICE.md): its agents have only what is stored.
    if (facts.serviceUnit !== null && stored === null && shell.status !== 'FAIL')
      return warn(
        id,
        `${shell.summary}, in this shell only: the service (${facts.serviceUnit}) leaves it out, so its agents will not have it`,
        `run ${ctx.agent.program} and /login, or give the unit the key in an EnvironmentFile= drop-in (systemctl --user edit)`,
      );
    return shell;
  }
  if (stored !== null) return stored;
  const fix = `run ${ctx.agent.program} and /login, or export ANTHROPIC_API_KEY before engine run`;
  if (ctx.probe.platform === 'darwin')
    return warn(
      id,
      'no key in the environment or settings; a macOS login is in the Keychain, which doctor does not read',
      fix,
    );
  return fail(
    id,
    `no API key (ANTHROPIC_API_KEY, apiKeyHelper), no CLAUDE_CODE_OAUTH_TOKEN and no login (${facts.paths.credentials})`,
    fix,
  );
}

/** How far back engine may need a transcript: the last retry's delay, plus a day for `engine resume`. */
export function transcriptNeedMs(settings: DoctorContext['settings']): number {
  let wait = 0;
  for (let n = 0; n < settings.retries; n++) wait += settings.retryBackoffMs * 2 ** n;
  return wait + 86_400_000;
}

export function checkCleanup(ctx: DoctorContext, facts: ClaudeFacts): CheckResult {
  const id = 'claude-transcripts';
  if (ctx.agent.claude === null)
    return skip(id, 'a custom agent that is not claude: Claude Code is not used');
  const days = facts.settings.cleanupPeriodDays ?? 30;
  const needDays = transcriptNeedMs(ctx.settings) / 86_400_000;
  const shown = `${needDays.toFixed(needDays < 10 ? 1 : 0)} days`;
  const fix = `set "cleanupPeriodDays": ${Math.max(30, Math.ceil(needDays))} in ${facts.paths.settings[0]}`;
  if (days <= 0)
    return fail(
      id,
      `cleanupPeriodDays ${days}: Claude Code keeps no transcripts, so no retry or engine resume can continue one`,
      fix,
    );
  if (days < needDays)
    return warn(
      id,
      `cleanupPeriodDays ${days}, but retries and engine resume may need transcripts ${shown} old`,
      fix,
    );
  return pass(
    id,
    `transcripts kept ${days} days${facts.settings.cleanupPeriodDays === null ? ' (the default)' : ''}; engine needs ${shown}`,
  );
}
