import { defineConfig } from 'vitest/config';
import { CLAUDE_CODE_BIN } from './scripts/claude-code.js';

/**
 * `npm run test:claude`: the tests against the real Claude Code CLI, which
 * scripts/install-claude-code.ts puts in .cache/claude-code/ first. ENGINE_TEST_CLAUDE_BIN, when
 * set, names another `claude` to test.
 */
export default defineConfig({
  test: {
    include: ['test/claude/**/*.test.ts'],
    pool: 'forks',
    // Marks the run and, after it, fails it if a test left a process running.
    globalSetup: ['test/helpers/leftover-processes.ts'],
    env: { ENGINE_TEST_CLAUDE_BIN: process.env.ENGINE_TEST_CLAUDE_BIN ?? CLAUDE_CODE_BIN },
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
