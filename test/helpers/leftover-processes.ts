/**
 * Vitest globalSetup (vitest.config.ts, vitest.torture.config.ts): marks this test run, and after
 * the whole run fails it if any process the tests started is still alive.
 *
 * The mark is ENGINE_TEST_RUN=<random id> in the environment, which every process the tests start
 * inherits: the daemons, their tmux servers, the agent wrappers and agents, even when they run as
 * another user or were reparented to init. Only marked processes are killed, each by pid.
 */
import { randomBytes } from 'node:crypto';
import { killProcessesWithEnv, processesWithEnv } from './process-env.js';
import { waitFor } from './wait-for.js';

export default function setup(): () => Promise<void> {
  const run = randomBytes(8).toString('hex');
  process.env.ENGINE_TEST_RUN = run;
  const mark = `ENGINE_TEST_RUN=${run}`;
  return async () => {
    // A process a test ended may still be on its way out (a wrapper records the exit code).
    // The wait stays within vitest's teardownTimeout (10 s), after which it exits unchecked.
    const settled = await waitFor(() => processesWithEnv(mark).length === 0, {
      timeoutMs: 5000,
    }).catch(() => false);
    if (settled) return;
    const leftovers = killProcessesWithEnv(mark);
    if (leftovers.length === 0) return;
    // Vitest only logs an error thrown here ("error during close"): the exit code says it.
    process.exitCode = 1;
    throw new Error(
      `${leftovers.length} process(es) started by the tests were still running after the run ` +
        `(now killed); a test must end everything it starts, even when it fails:\n` +
        leftovers.map((p) => `  ${p.pid}: ${p.command}`).join('\n'),
    );
  };
}
