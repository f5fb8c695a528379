// Where `npm run test:claude` keeps the real Claude Code CLI: a git-ignored cache in the repository,
// never a dependency of engine (the CLI and its native binary take about 364 MB).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Pinned exactly: the tests in test/claude/ rely on what this version sends and prints. */
export const CLAUDE_CODE_VERSION = '2.1.330';

export const CLAUDE_CODE_DIR = fileURLToPath(new URL('../.cache/claude-code/', import.meta.url));

/** The package the CLI installs as; its own package.json says the version installed. */
export const CLAUDE_CODE_PACKAGE = join(
  CLAUDE_CODE_DIR,
  'node_modules',
  '@anthropic-ai',
  'claude-code',
);

/**
 * A one-line sh script that runs the installed CLI, whichever way it runs here: the tests and
 * `--agent-cmd` then name a single program.
 */
export const CLAUDE_CODE_BIN = join(CLAUDE_CODE_DIR, 'bin', 'claude');
