import { defineConfig } from 'vitest/config';

/** The torture profile of the reliability suite: more rounds, 100,000 files, longer editor runs. */
export default defineConfig({
  test: {
    include: ['test/reliability/**/*.test.ts'],
    pool: 'forks',
    env: { ENGINE_TORTURE: '1' },
    testTimeout: 900_000,
    hookTimeout: 120_000,
  },
});
