import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Tests spawn real processes and tmux servers; forks keep them isolated per file.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
