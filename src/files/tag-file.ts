/**
 * Tag edits applied to files: the pure edits of `tags/edit-tags.ts` run inside the one
 * compare-and-swap writer, with error messages that name the file (the bash tool's contract).
 */
import { EngineError, PreconditionError } from '../errors.js';
import {
  addTag,
  EditChangesMeaningError,
  LineOutOfRangeError,
  removeTag,
  swapTags,
  TagMissingError,
  TwoStatesError,
} from '../tags/edit-tags.js';
import { LIFECYCLE_TRANSITIONS, lifecycleOf } from '../tags/tag-name.js';
import { shellQuote } from '../runners/runner.js';
import { updateRequestFile, type TextEdit, type UpdateResult } from './update-request-file.js';

export function addTagToFile(file: string, tag: string): Promise<UpdateResult> {
  return editFile(file, (text) => addTag(text, tag));
}

export function removeTagFromFile(file: string, tag: string, line?: number): Promise<UpdateResult> {
  return editFile(file, (text) => removeTag(text, tag, line));
}

export function swapTagInFile(
  file: string,
  olds: string[],
  next: string,
  line?: number,
): Promise<UpdateResult> {
  return editFile(file, (text) => swapTags(text, olds, next, line));
}

/** Runs `edit` under the compare-and-swap writer and turns refusals into messages naming `file`. */
export async function editFile(file: string, edit: TextEdit): Promise<UpdateResult> {
  try {
    return await updateRequestFile(file, edit);
  } catch (error) {
    throw describeRefusal(error, file);
  }
}

export function describeRefusal(error: unknown, file: string): unknown {
  if (error instanceof TagMissingError) {
    if (error.tags.length === 1 && error.line !== undefined && !error.isSwap) {
      return new PreconditionError(
        `Tag '${error.tags[0]}' not found at line ${error.line} of ${file}`,
      );
    }
    const where = error.line === undefined ? 'on Tags line' : `at line ${error.line}`;
    const suffix = error.line === undefined ? ' (already claimed?)' : '';
    return new PreconditionError(
      `None of '${error.tags.join(',')}' found ${where} of ${file}${suffix}`,
    );
  }
  if (error instanceof EditChangesMeaningError) {
    // Not a changed precondition (nothing to retry on): an error the caller must show.
    return new EngineError(
      `Refused to edit line ${error.line} of ${file}: the edit would change which other text is a tag (removing the line would turn code below it into prose, say); nothing was written, edit it by hand`,
    );
  }
  if (error instanceof TwoStatesError) return twoStatesRefusal(error, file);
  if (error instanceof LineOutOfRangeError) {
    return new EngineError(
      `Line ${error.line} is out of range for ${file} (it has ${error.lineCount} lines)`,
    );
  }
  return error;
}

/** The refusal of an edit that would leave one noun two lifecycle states, with what to run. */
function twoStatesRefusal({ states, result, wanted }: TwoStatesError, file: string): EngineError {
  const quoted = shellQuote(file);
  const life = wanted === null ? null : lifecycleOf(wanted);
  let remedy = `Remove the state that is not true first (engine tag remove ${quoted} '<tag>')`;
  const sameNoun = life !== null && states.every((tag) => lifecycleOf(tag)?.noun === life.noun);
  if (wanted !== null && life && sameNoun) {
    const swap = `engine tag swap ${quoted} ${shellQuote(states.join(','))} ${shellQuote(wanted)}`;
    const approvable =
      states.every((tag) => lifecycleOf(tag)?.state === LIFECYCLE_TRANSITIONS.approve.from) &&
      (life.state === 'delegated' || life.state === 'next');
    remedy = approvable
      ? `Approve it instead: engine tag approve ${quoted} --to ${life.state} (or ${swap})`
      : `Swap its state instead, naming every state it has: ${swap}`;
  }
  return new EngineError(
    `Refused to edit ${file}: its Tags line or front matter would hold ${result.join(' ')}, two lifecycle states of one noun (one noun has one state); nothing was written. ${remedy}`,
  );
}
