import { defineConfig } from 'vitest/config';

/**
 * `npm run test:package`: `npm pack`'s tarball installed into an empty prefix and run from outside
 * the clone (test/package/*.package.ts), apart from `npm test`: it rebuilds dist/ (prepack) and
 * installs the dependencies, which takes about a minute.
 */
export default defineConfig({
  test: {
    include: ['test/package/**/*.package.ts'],
    pool: 'forks',
    // Marks the run and, after it, fails it if a test left a process running.
    globalSetup: ['test/helpers/leftover-processes.ts'],
    testTimeout: 300_000,
    hookTimeout: 60_000,
  },
});
