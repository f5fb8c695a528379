/** The real machine behind `DoctorProbe`: files, programs, /proc, sockets, the clock. */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findProgram } from '../dispatch/agent-command.js';
import { EngineError, isErrnoException, messageOf } from '../errors.js';
import { checkLiveness, systemProbe } from '../process/process-identity.js';
import { isIgnoredDirectoryName, isMarkdownPath } from '../tags/walk-markdown.js';
import { testPushRefs } from './claims-remote.js';
import type { DoctorProbe, RunOutcome } from './doctor-check.js';
import type { WatcherKind } from '../watch/watch-backend.js';

const execFileAsync = promisify(execFile);

/** A program that takes longer than this to print its version is reported as failing. */
const RUN_TIMEOUT_MS = 15_000;

const SOCKET_TIMEOUT_MS = 2_000;

async function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<RunOutcome> {
  try {
    const { stdout } = await execFileAsync(file, args, {
      env,
      encoding: 'utf8',
      timeout: RUN_TIMEOUT_MS,
    });
    return { ok: true, stdout };
  } catch (error) {
    const failed = error as { stderr?: string; message: string; killed?: boolean };
    if (failed.killed) return { ok: false, reason: `no answer within ${RUN_TIMEOUT_MS / 1000} s` };
    const stderr = (failed.stderr ?? '').trim().split('\n')[0];
    return { ok: false, reason: stderr !== undefined && stderr !== '' ? stderr : failed.message };
  }
}

async function watchesNeeded(paths: string[], watcher: WatcherKind): Promise<number> {
  let needed = 0;
  const count = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => null);
    if (entries === null) return;
    needed++;
    for (const entry of entries) {
      if (entry.isDirectory()) {
        if (!isIgnoredDirectoryName(entry.name)) await count(join(dir, entry.name));
      } else if (watcher === 'chokidar' && isMarkdownPath(entry.name)) needed++;
    }
  };
  for (const path of paths) await count(path);
  return needed;
}

function socketAnswers(path: string): Promise<boolean | null> {
  return stat(path).then(
    () =>
      new Promise<boolean>((resolve) => {
        const socket = connect(path);
        socket.once('connect', () => (socket.destroy(), resolve(true)));
        socket.once('error', () => resolve(false));
        // A socket whose listener hangs is as good as none.
        socket.setTimeout(SOCKET_TIMEOUT_MS, () => (socket.destroy(), resolve(false)));
      }),
    () => null,
  );
}

async function writeStamp(dir: string): Promise<{ before: number; mtime: number; after: number }> {
  const path = join(dir, `.doctor-clock-${randomBytes(4).toString('hex')}`);
  const before = Date.now();
  await writeFile(path, '', { flag: 'wx' });
  try {
    const after = Date.now();
    return { before, mtime: (await stat(path)).mtimeMs, after };
  } finally {
    await rm(path, { force: true });
  }
}

const engines = (): string => {
  const path = new URL('../../package.json', import.meta.url);
  return (
    (JSON.parse(readFileSync(path, 'utf8')) as { engines?: { node?: string } }).engines?.node ?? ''
  );
};

/** The file's text; null only when there is none. Any other error (EACCES, EISDIR) is thrown. */
async function readText(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if (isErrnoException(error) && error.code === 'ENOENT') return null;
    throw new EngineError(`cannot read ${path}: ${messageOf(error)}`);
  }
}

export function systemDoctorProbe(): DoctorProbe {
  return {
    nodeVersion: process.versions.node,
    nodeRange: engines(),
    platform: process.platform,
    uid: process.getuid?.() ?? -1,
    home: homedir(),
    readText,
    findProgram,
    run,
    watchesNeeded,
    liveness: (holder) => checkLiveness(holder, systemProbe),
    socketAnswers,
    writeStamp,
    pushTestRefs: testPushRefs,
  };
}
