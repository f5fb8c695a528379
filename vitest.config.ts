import { configDefaults, defineConfig } from 'vitest/config';
import { E2E_TESTS } from './vitest.e2e.config.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The real Claude Code CLI is not installed by `npm install`: `npm run test:claude` runs these.
    // The daemon's end-to-end and reliability suites take most of the time: `npm run test:e2e`.
    exclude: [...configDefaults.exclude, 'test/claude/**', ...E2E_TESTS],
    // Tests spawn real processes and tmux servers; forks keep them isolated per file.
    pool: 'forks',
    // Marks the run and, after it, fails it if a test left a process running.
    globalSetup: ['test/helpers/leftover-processes.ts'],
    // maxLength means what it says in property tests (fast-check-sizes.ts).
    setupFiles: ['test/helpers/fast-check-sizes.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
