/**
 * The editor `engine new --edit` opens: `$VISUAL`, else `$EDITOR`, split into an argument vector
 * the way a shell splits words (quotes and backslashes), but with no shell: nothing in it is
 * expanded or run, and the file's path is one argument whatever it holds.
 */
import { splitShellWords } from '../dispatch/agent-command.js';
import { EngineError } from '../errors.js';

/** The editor's argv (the file goes after it); an error when neither variable is set. */
export function editorArgv(env: NodeJS.ProcessEnv): string[] {
  const name = env.VISUAL?.trim() ? 'VISUAL' : env.EDITOR?.trim() ? 'EDITOR' : null;
  if (name === null)
    throw new EngineError(
      '--edit: neither $VISUAL nor $EDITOR is set; set one (e.g. export EDITOR=nano), or leave out --edit and open the file yourself; nothing written',
    );
  const words = splitWords(env[name] as string, name);
  if (words.length === 0) throw new EngineError(`$${name} holds no command`);
  return words;
}

/** Shell-like word splitting (dispatch/agent-command's splitter), its error naming `$source`. */
export function splitWords(text: string, source: string): string[] {
  return splitShellWords(text, (quote) => `$${source} has an unclosed ${quote}: ${text}`);
}
