/**
 * `engine init`'s writes: the plan (plan-init.ts) made real under a root, never over anything
 * that exists. A file is written whole to a temporary name and linked into place, which fails if
 * the name exists, so neither a second init nor a file created meanwhile is ever overwritten,
 * and no half-written file is left under the final name. Each file written is recorded
 * (init-manifest.ts) for `--upgrade`; `.gitignore` only ever gets lines appended.
 */
import { appendFile, lstat, mkdir, readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { EngineError, isErrnoException, messageOf } from '../errors.js';
import { createWhole } from '../files/create-whole.js';
import { GITIGNORE, gitignoreAddition } from './gitignore.js';
import { hashOf, readManifest, recordWritten } from './init-manifest.js';
import { ENGINE_JSON } from '../settings/setting-table.js';
import { planInit, TAGS_MD, type InitEntry } from './plan-init.js';

export type InitAction =
  | 'wrote'
  | 'made'
  | 'kept'
  | 'would write'
  | 'would make'
  | 'added to'
  | 'would add to'
  | 'upgraded'
  | 'would upgrade'
  | 'up to date'
  | 'edited'
  | 'removed'
  | 'would remove';

export interface InitStep {
  /** Relative to the root, `/`-separated; a directory ends with `/`. */
  path: string;
  action: InitAction;
  /** What the step is about, in words (the lines added, why a file is left alone). */
  note?: string;
  /** A unified diff of the change made, or (action `edited`) of the change not made. */
  diff?: string;
}

export interface InitOptions {
  dryRun: boolean;
  /** Claims run in git worktrees (engine.json `worktree`; the commands then say to commit). */
  worktree: boolean;
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
    worktree: options.worktree,
  });
  for (const { skill, reason } of plan.skipped) options.onSkip(skill, reason);
  const steps: InitStep[] = [];
  const recorded = options.dryRun ? {} : (await readManifest(root)).files;
  const record: Record<string, string> = {};
  for (const entry of plan.entries) {
    const step = await apply(root, entry, options.dryRun);
    if (entry.kind === 'file' && !options.dryRun && recorded[entry.path] === undefined) {
      // A kept file identical to what init writes is recorded too: --upgrade may replace it.
      const now = await readIfThere(join(root, entry.path));
      if (now === entry.content) record[entry.path] = hashOf(now);
    }
    steps.push(step);
    options.onStep(step);
  }
  if (!options.dryRun) await recordWritten(root, record).catch(failWith(root));
  const ignore = await addGitignoreLines(root, options.dryRun);
  steps.push(ignore);
  options.onStep(ignore);
  return steps;
}

/** Appends engine's runtime patterns the project's .gitignore lacks (creating it if missing). */
export async function addGitignoreLines(root: string, dryRun: boolean): Promise<InitStep> {
  const path = join(root, GITIGNORE);
  const addition = gitignoreAddition(await readIfThere(path));
  if (addition === null) return { path: GITIGNORE, action: 'kept', note: 'has every engine line' };
  const note = addition.added.join(' ');
  if (dryRun) return { path: GITIGNORE, action: 'would add to', note };
  await appendFile(path, addition.text).catch(failWith(path));
  return { path: GITIGNORE, action: 'added to', note };
}

/** The root must be a directory, or not exist yet (it is then made, unless this is a dry run). */
export async function checkRoot(root: string, dryRun: boolean): Promise<void> {
  const info = await stat(root).catch((error: unknown) => {
    if (isErrnoException(error) && error.code === 'ENOENT') return null;
    throw writeError(root, error);
  });
  if (info !== null && !info.isDirectory())
    throw new EngineError(`--root ${root} is not a directory`);
  if (info === null && !dryRun) await mkdir(root, { recursive: true }).catch(failWith(root));
}

export async function readIfThere(path: string): Promise<string | null> {
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

export function writeError(path: string, error: unknown): EngineError {
  const reason =
    isErrnoException(error) && ['EACCES', 'EPERM', 'EROFS'].includes(error.code as string)
      ? `not writable (${error.code})`
      : messageOf(error);
  return new EngineError(`cannot write ${path}: ${reason}`, { cause: error });
}

export function failWith(path: string): (error: unknown) => never {
  return (error) => {
    throw writeError(path, error);
  };
}

/**
 * Whether the project's engine.json turns worktrees on. A file that is missing, unreadable or not
 * JSON says no: init checks the root itself, and engine run reports a malformed engine.json.
 */
export async function worktreeSetting(root: string): Promise<boolean> {
  const text = await readFile(join(root, ENGINE_JSON), 'utf8').catch(() => null);
  if (text === null) return false;
  try {
    return (JSON.parse(text) as { worktree?: unknown } | null)?.worktree === true;
  } catch {
    return false;
  }
}
