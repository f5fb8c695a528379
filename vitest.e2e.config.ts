import { defineConfig } from 'vitest/config';

/**
 * `npm run test:e2e`: the daemon end to end (test/daemon/) and the reliability suite's default
 * profile (test/reliability/): real daemons, agents and tmux servers, about two thirds of the
 * tests' time, kept apart so that `npm test` stays within a few minutes on 2 cores.
 */
export const E2E_TESTS = ['test/daemon/**/*.test.ts', 'test/reliability/**/*.test.ts'];

export default defineConfig({
  test: {
    include: E2E_TESTS,
    pool: 'forks',
    // Marks the run and, after it, fails it if a test left a process running.
    globalSetup: ['test/helpers/leftover-processes.ts'],
    // maxLength means what it says in property tests (fast-check-sizes.ts).
    setupFiles: ['test/helpers/fast-check-sizes.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
