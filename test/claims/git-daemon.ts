/**
 * `git daemon` on 127.0.0.1 serving a directory of bare repositories: the remote as a server,
 * not a path. Without `receivePack` it refuses every push, as a read-only git:// server does.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { git } from '../helpers/git.js';
import { waitFor } from '../helpers/wait-for.js';

export interface GitDaemon {
  /** The git:// URL of a repository under the served directory. */
  url(path: string): string;
  stop(): Promise<void>;
}

/** A port no one listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function gitDaemon(
  base: string,
  probe: string,
  { receivePack }: { receivePack: boolean },
): Promise<GitDaemon> {
  const port = await freePort();
  const child = spawn(
    'git',
    [
      'daemon',
      '--listen=127.0.0.1',
      `--port=${port}`,
      '--reuseaddr',
      '--export-all',
      `--base-path=${base}`,
      ...(receivePack ? ['--enable=receive-pack'] : []),
      base,
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = (path: string) => `git://127.0.0.1:${port}/${path}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    await waitFor(
      () => {
        git(base, 'ls-remote', url(probe));
        return true;
      },
      { message: `git daemon on port ${port}` },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, stop };
}
