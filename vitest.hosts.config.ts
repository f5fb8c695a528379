import { defineConfig } from 'vitest/config';

/**
 * `npm run test:hosts`: the many-hosts races through real git (test/claims/*.hosts.ts), apart
 * from `npm test`, since 2,000 pushes by 5 processes take minutes on 2 cores.
 */
export default defineConfig({
  test: {
    include: ['test/claims/**/*.hosts.ts'],
    pool: 'forks',
    // One file at a time: each runs several daemons and thousands of pushes on 2 cores, and
    // files run together starved their hosts' lease renewals (a live lease ran out in CI).
    fileParallelism: false,
    // Marks the run and, after it, fails it if a test left a process running.
    globalSetup: ['test/helpers/leftover-processes.ts'],
    testTimeout: 600_000,
    hookTimeout: 60_000,
  },
});
