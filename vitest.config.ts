import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Real processes, sockets and SQLite files: generous, but bounded.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
