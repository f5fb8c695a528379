/**
 * `engine init`'s writes: the plan (plan-init.ts) made real under a root, never over anything
 * that exists. A file is written whole to a temporary name and linked into place, which fails if
 * the name exists, so neither a second init nor a file created meanwhile is ever overwritten,
 * and no half-written file is left under the final name.
 */
import { lstat, mkdir, readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { EngineError, isErrnoException, messageOf } from '../errors.js';
import { createWhole } from '../files/create-whole.js';
import { planInit, TAGS_MD, type InitEntry } from './plan-init.js';

export type InitAction = 'wrote' | 'made' | 'kept' | 'would write' | 'would make';

export interface InitStep {
  /** Relative to the root, `/`-separated; a directory ends with `/`. */
  path: string;
  action: InitAction;
}

export interface InitOptions {
  dryRun: boolean;
  /** The §TAG_DISPATCH file shipped with engine: written when the project has none. */
  shippedTagsPath: string;
  /** Told each step as it is done, so that a failure half-way still shows what was written. */
  onStep(step: InitStep): void;
  /** Told each skill that gets no command, and why. */
  onSkip(skill: string, reason: string): void;
}

export async function initProject(root: string, options: InitOptions): Promise<InitStep[]> {
  await checkRoot(root, options.dryRun);
  const projectTagsPath = join(root, TAGS_MD);
  const plan = planInit({
    shippedTags: await readFile(options.shippedTagsPath, 'utf8'),
    shippedTagsPath: options.shippedTagsPath,
    projectTags: await readIfThere(projectTagsPath),
    projectTagsPath,
  });
  for (const { skill, reason } of plan.skipped) options.onSkip(skill, reason);
  const steps: InitStep[] = [];
  for (const entry of plan.entries) {
    const step = await apply(root, entry, options.dryRun);
    steps.push(step);
    options.onStep(step);
  }
  return steps;
}

/** The root must be a directory, or not exist yet (it is then made, unless this is a dry run). */
async function checkRoot(root: string, dryRun: boolean): Promise<void> {
  const info = await stat(root).catch((error: unknown) => {
    if (isErrnoException(error) && error.code === 'ENOENT') return null;
    throw writeError(root, error);
  });
  if (info !== null && !info.isDirectory())
    throw new EngineError(`--root ${root} is not a directory`);
  if (info === null && !dryRun) await mkdir(root, { recursive: true }).catch(failWith(root));
}

async function readIfThere(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if (isErrnoException(error) && error.code === 'ENOENT') return null;
    throw new EngineError(`cannot read ${path}: ${messageOf(error)}`);
  }
}

async function apply(root: string, entry: InitEntry, dryRun: boolean): Promise<InitStep> {
  const path = join(root, entry.path);
  const shown = entry.kind === 'dir' ? `${entry.path}/` : entry.path;
  // lstat: a symlink, even a dangling one, is something the user put there.
  const exists = await lstat(path).then(
    () => true,
    (error: unknown) => {
      if (isErrnoException(error) && error.code === 'ENOENT') return false;
      throw writeError(path, error);
    },
  );
  if (exists) return { path: shown, action: 'kept' };
  if (dryRun) return { path: shown, action: entry.kind === 'dir' ? 'would make' : 'would write' };
  if (entry.kind === 'dir') {
    const made = await mkdir(path).then(
      () => true,
      (error: unknown) => {
        if (isErrnoException(error) && error.code === 'EEXIST') return false;
        throw writeError(path, error);
      },
    );
    return { path: shown, action: made ? 'made' : 'kept' };
  }
  await mkdir(dirname(path), { recursive: true }).catch(failWith(dirname(path)));
  return { path: shown, action: (await createFile(path, entry.content)) ? 'wrote' : 'kept' };
}

/** Writes `content` to `path` unless something is there; false when something was. */
function createFile(path: string, content: string): Promise<boolean> {
  return createWhole(path, content).catch(failWith(path));
}

function writeError(path: string, error: unknown): EngineError {
  const reason =
    isErrnoException(error) && ['EACCES', 'EPERM', 'EROFS'].includes(error.code as string)
      ? `not writable (${error.code})`
      : messageOf(error);
  return new EngineError(`cannot write ${path}: ${reason}`, { cause: error });
}

function failWith(path: string): (error: unknown) => never {
  return (error) => {
    throw writeError(path, error);
  };
}
