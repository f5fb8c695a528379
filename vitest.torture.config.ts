import { defineConfig } from 'vitest/config';

/** The torture profile of the reliability suite: more rounds, 100,000 files, longer editor runs. */
export default defineConfig({
  test: {
    include: ['test/reliability/**/*.test.ts'],
    pool: 'forks',
    // Marks the run and, after it, fails it if a test left a process running.
    globalSetup: ['test/helpers/leftover-processes.ts'],
    // maxLength means what it says in property tests (fast-check-sizes.ts).
    setupFiles: ['test/helpers/fast-check-sizes.ts'],
    // One file at a time: 100,000 files created at once starve every other daemon on 2 cores,
    // and the requeue bounds of the other files would then measure the starvation.
    fileParallelism: false,
    env: { ENGINE_TORTURE: '1' },
    testTimeout: 900_000,
    hookTimeout: 120_000,
  },
});
