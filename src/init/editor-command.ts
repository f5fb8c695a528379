/**
 * The editor `engine new --edit` opens: `$VISUAL`, else `$EDITOR`, split into an argument vector
 * the way a shell splits words (quotes and backslashes), but with no shell: nothing in it is
 * expanded or run, and the file's path is one argument whatever it holds.
 */
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

/** Shell-like word splitting: whitespace separates; '...' is literal; "..." and \ escape. */
export function splitWords(text: string, source: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
    } else if (
      c === '\\' &&
      i + 1 < text.length &&
      (quote === null || /["\\$`]/.test(text[i + 1] as string))
    ) {
      word = (word ?? '') + text[++i];
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= '';
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (quote !== null) throw new EngineError(`$${source} has an unclosed ${quote}: ${text}`);
  if (word !== null) words.push(word);
  return words;
}
