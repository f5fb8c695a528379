/**
 * `engine init --upgrade`: brings the files `engine init` wrote earlier to what this engine
 * writes, where the user has not edited them. A file whose bytes still hash to the record
 * (init-manifest.ts) is replaced, with its diff shown; an edited or unrecorded file is left alone
 * and named, with the diff it would have had; a missing one is written as init writes it; a
 * recorded file this engine no longer writes (a command it dropped) is removed if unedited.
 */
import { lstat, mkdir, readFile, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { EngineError } from '../errors.js';
import { createWhole } from '../files/create-whole.js';
import { writeTextAtomic } from '../files/write-json-atomic.js';
import {
  addGitignoreLines,
  failWith,
  readIfThere,
  type InitOptions,
  type InitStep,
} from './init-project.js';
import { hashOf, MANIFEST, readManifest, recordWritten, type Manifest } from './init-manifest.js';
import { planInit, TAGS_MD, type InitEntry } from './plan-init.js';

type FileEntry = Extract<InitEntry, { kind: 'file' }>;

export async function upgradeProject(root: string, options: InitOptions): Promise<InitStep[]> {
  if (!(await lstat(join(root, 'directives')).catch(() => null))?.isDirectory())
    throw new EngineError(`nothing to upgrade in ${root}: no directives/; run engine init first`);
  const { files: manifest, ignored } = await readManifest(root);
  const shippedTags = await readFile(options.shippedTagsPath, 'utf8');
  const projectTagsPath = join(root, TAGS_MD);
  const projectTags = await readIfThere(projectTagsPath);
  // An unedited TAGS.md becomes the shipped one: the commands follow the table that will be there.
  const tagsReplaced = projectTags !== null && isUnedited(manifest, TAGS_MD, projectTags);
  const plan = planInit({
    shippedTags,
    shippedTagsPath: options.shippedTagsPath,
    projectTags: tagsReplaced ? null : projectTags,
    projectTagsPath,
    worktree: options.worktree,
  });
  for (const { skill, reason } of plan.skipped) options.onSkip(skill, reason);
  const steps: InitStep[] = ignored.map((key) => ({
    path: key,
    action: 'edited',
    note: `in ${MANIFEST}, but not a path engine init writes: ignored`,
  }));
  for (const step of steps) options.onStep(step);
  const record: Record<string, string | null> = {};
  const planned = new Set<string>();
  for (const entry of plan.entries) {
    if (entry.kind === 'dir') {
      await mkdir(join(root, entry.path), { recursive: true }).catch(failWith(entry.path));
      continue;
    }
    planned.add(entry.path);
    steps.push(await upgradeFile(root, entry, manifest, options.dryRun, record));
    options.onStep(steps[steps.length - 1] as InitStep);
  }
  for (const path of Object.keys(manifest).filter((p) => !planned.has(p))) {
    steps.push(await dropFile(root, path, manifest, options.dryRun, record));
    options.onStep(steps[steps.length - 1] as InitStep);
  }
  if (!options.dryRun) await recordWritten(root, record).catch(failWith(root));
  steps.push(await addGitignoreLines(root, options.dryRun));
  options.onStep(steps[steps.length - 1] as InitStep);
  return steps;
}

function isUnedited(manifest: Manifest, path: string, text: string): boolean {
  return manifest[path] === hashOf(text);
}

async function upgradeFile(
  root: string,
  entry: FileEntry,
  manifest: Manifest,
  dryRun: boolean,
  record: Record<string, string | null>,
): Promise<InitStep> {
  const path = join(root, entry.path);
  const linked = await symlinkOnPath(root, entry.path);
  if (linked !== null) return { path: entry.path, action: 'edited', note: linked };
  const now = await readIfThere(path);
  if (now === null) {
    if (dryRun) return { path: entry.path, action: 'would write' };
    await mkdir(dirname(path), { recursive: true }).catch(failWith(dirname(path)));
    if (!(await createWhole(path, entry.content).catch(failWith(path))))
      return { path: entry.path, action: 'kept', note: 'appeared meanwhile' };
    record[entry.path] = hashOf(entry.content);
    return { path: entry.path, action: 'wrote' };
  }
  if (now === entry.content) {
    if (manifest[entry.path] !== hashOf(now)) record[entry.path] = hashOf(now);
    return { path: entry.path, action: 'up to date' };
  }
  const diff = unifiedDiff(entry.path, now, entry.content);
  if (!isUnedited(manifest, entry.path, now)) {
    const why =
      manifest[entry.path] === undefined
        ? 'not recorded as written by engine init'
        : 'edited since engine init wrote it';
    return { path: entry.path, action: 'edited', note: why, diff };
  }
  if (dryRun) return { path: entry.path, action: 'would upgrade', diff };
  const replaced = await writeTextAtomic(path, entry.content, () =>
    stillUnedited(root, entry.path, manifest),
  ).catch(failWith(path));
  if (!replaced) return { path: entry.path, action: 'kept', note: CHANGED_MEANWHILE };
  record[entry.path] = hashOf(entry.content);
  return { path: entry.path, action: 'upgraded', diff };
}

/** A recorded file this engine no longer writes: removed if unedited, else named. */
async function dropFile(
  root: string,
  relative: string,
  manifest: Manifest,
  dryRun: boolean,
  record: Record<string, string | null>,
): Promise<InitStep> {
  const path = join(root, relative);
  const linked = await symlinkOnPath(root, relative);
  if (linked !== null) return { path: relative, action: 'edited', note: linked };
  const now = await readIfThere(path);
  const note = 'no longer written by engine init';
  if (now === null) {
    if (!dryRun) record[relative] = null;
    return { path: relative, action: 'up to date', note: `${note}; already gone` };
  }
  if (!isUnedited(manifest, relative, now))
    return { path: relative, action: 'edited', note: `${note}, and edited since: left alone` };
  const diff = unifiedDiff(relative, now, '');
  if (dryRun) return { path: relative, action: 'would remove', note, diff };
  if (!(await stillUnedited(root, relative, manifest)))
    return { path: relative, action: 'kept', note: CHANGED_MEANWHILE };
  await unlink(path).catch(failWith(path));
  record[relative] = null;
  return { path: relative, action: 'removed', note, diff };
}

const CHANGED_MEANWHILE = 'changed while upgrading: left alone';

/** Re-read and re-hashed right before the change: an edit made meanwhile is not overwritten. */
async function stillUnedited(root: string, relative: string, manifest: Manifest): Promise<boolean> {
  if ((await symlinkOnPath(root, relative)) !== null) return false;
  const now = await readIfThere(join(root, relative));
  return now !== null && isUnedited(manifest, relative, now);
}

/**
 * Why `relative` must not be touched, if a symlink is on its way from the root (a parent, or the
 * file itself): a change would land outside the files init wrote. Null when there is none.
 */
async function symlinkOnPath(root: string, relative: string): Promise<string | null> {
  const parts = relative.split('/');
  for (let i = 1; i <= parts.length; i++) {
    const part = parts.slice(0, i).join('/');
    const stats = await lstat(join(root, part)).catch(() => null);
    if (stats === null) return null;
    if (stats.isSymbolicLink())
      return i === parts.length ? 'a symlink: left alone' : `${part} is a symlink: left alone`;
  }
  return null;
}

/** `--- a/PATH` / `+++ b/PATH` and hunks with 3 lines of context, as git shows a change. */
export function unifiedDiff(path: string, before: string, after: string): string {
  const patch = createTwoFilesPatch(`a/${path}`, `b/${path}`, before, after, undefined, undefined, {
    context: 3,
  });
  // The patch opens with a line of `=`: drop it, so the diff reads as git's does.
  return patch.slice(patch.indexOf('--- '));
}
