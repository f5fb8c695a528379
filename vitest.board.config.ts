import { defineConfig } from 'vitest/config';

/**
 * `npm run test:board`: the board in a real browser (Debian's chromium driven by playwright-core,
 * test/board/*.browser.ts), apart from `npm test`, since it needs chromium installed.
 * ENGINE_TEST_CHROMIUM names another chromium binary.
 */
export default defineConfig({
  test: {
    include: ['test/board/**/*.browser.ts'],
    pool: 'forks',
    // Marks the run and, after it, fails it if a test left a process running.
    globalSetup: ['test/helpers/leftover-processes.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
