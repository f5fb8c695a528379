/**
 * What to say about a command line yargs refused: the command or flag most likely meant, the
 * quoting a shell-eaten `#` needs, and which help to read. Pure: the full CLI prints it.
 */
import { nearestName } from './nearest-name.js';

/** The command level yargs failed at, as its fail callback's third argument gives it. */
export interface FailedLevel {
  /** `[command string, description, ...]` of the subcommands at this level. */
  getCommands(): Array<[string, ...unknown[]]>;
  /** Option name to description, for every option at this level. */
  getDescriptions(): Record<string, unknown>;
  /** `[usage text, ...]`; its first word after `$0` name this level's command. */
  getUsage(): Array<[string, ...unknown[]]>;
}

export interface Explained {
  message: string;
  /** Print this level's help first: nothing was named where a command was needed. */
  showHelp: boolean;
}

/** Positionals that hold tags: a `#` typed unquoted there starts a shell comment. */
const TAG_POSITIONALS = new Set(['pattern', 'tag', 'old', 'new']);

export function explainFailure(message: string, level: FailedLevel, argv: string[]): Explained {
  const usageWords = (level.getUsage()[0]?.[0] ?? '').split('\n')[0]?.split(' ').slice(1) ?? [];
  const path = commandPath(usageWords);
  const helpHint = ` (see engine ${[...path, '--help'].join(' ')})`;
  const commands = level.getCommands().map(([command]) => command.split(' ')[0] ?? '');
  const word = wordAfter(path, argv);
  if (commands.length > 0 && word !== undefined && !commands.includes(word))
    return { message: unknownCommand(word, commands) + helpHint, showHelp: false };
  const unknown = /^Unknown arguments?: (.*)$/.exec(message);
  if (unknown?.[1] !== undefined) {
    const words = unknown[1].split(', ');
    return { message: unknownWords(words, level, argv) + helpHint, showHelp: false };
  }
  if (commands.length > 0) return { message: 'Name a command (listed above)', showHelp: true };
  const missing = /^Not enough non-option arguments: got (\d+)/.exec(message);
  if (missing?.[1] !== undefined) {
    return { message: missingPositionals(path, usageWords, Number(missing[1])), showHelp: false };
  }
  return { message: message + helpHint, showHelp: false };
}

/** The command names a usage line starts with: `tag find` of `$0 tag find <pattern> [paths..]`. */
export function commandPath(usageWords: string[]): string[] {
  const end = usageWords.findIndex((w) => /^[<[-]/.test(w) || w === '');
  return end === -1 ? usageWords : usageWords.slice(0, end);
}

/** The first word of `argv` after the command path, not a flag: the command that was not known. */
function wordAfter(path: string[], argv: string[]): string | undefined {
  const words = argv.filter((a) => !a.startsWith('-'));
  return words.slice(0, path.length).join(' ') === path.join(' ') ? words[path.length] : undefined;
}

function unknownWords(words: string[], level: FailedLevel, argv: string[]): string {
  const options = Object.keys(level.getDescriptions());
  // `-jsn` is read as -j -s -n: most likely a long option typed with one dash.
  const clusters = argv.filter(
    (arg) => /^-[^-]{2,}$/.test(arg) && words.some((w) => w.length === 1 && arg.includes(w)),
  );
  const inCluster = (word: string): boolean =>
    word.length === 1 && clusters.some((arg) => arg.includes(word));
  const said = words
    .filter((word) => !inCluster(word))
    .map((word) => {
      const flag = typedFlag(argv, word);
      if (flag !== null) return unknownOption(flag, word, options);
      // yargs also names the camelCase twin of an unknown `--a-b`: not typed, not news.
      return argv.includes(word) ? `Unexpected argument '${word}'` : null;
    })
    .filter((text) => text !== null);
  for (const arg of clusters) {
    const near = nearestName(arg.slice(1), options);
    said.push(`Unknown option ${arg}${near === null ? '' : ` (did you mean --${near}?)`}`);
  }
  return said.join('; ');
}

/** The prefix `word` was typed with as a flag (`--`, `-`, `--no-`), or null: not as a flag. */
function typedFlag(argv: string[], word: string): string | null {
  for (const arg of argv) {
    const name = arg.replace(/=.*$/s, '');
    for (const prefix of ['--no-', '--', '-']) if (name === `${prefix}${word}`) return prefix;
  }
  return null;
}

function unknownOption(prefix: string, word: string, options: string[]): string {
  const near = nearestName(word, options);
  const dashes = prefix === '--no-' ? prefix : word.length === 1 ? '-' : '--';
  const nearDashes = prefix === '--no-' ? prefix : near?.length === 1 ? '-' : '--';
  return `Unknown option ${dashes}${word}${near === null ? '' : ` (did you mean ${nearDashes}${near}?)`}`;
}

function unknownCommand(word: string, commands: string[]): string {
  const near = nearestName(word, commands);
  return near === null
    ? `Unknown command '${word}'; the commands here: ${commands.join(', ')}`
    : `Unknown command '${word}' (did you mean ${near}?)`;
}

/**
 * A command line with too few positionals. When a missing one holds a tag, the likeliest cause
 * is an unquoted `#`: the shell dropped it and all after it.
 */
function missingPositionals(path: string[], usageWords: string[], got: number): string {
  const positionals = usageWords
    .slice(path.length)
    .filter((w) => w.startsWith('<'))
    .map((w) => w.replace(/[<>]/g, ''));
  const missing = positionals.slice(got);
  const names = missing.map((name) => `<${name}>`).join(' ');
  const command = `engine ${path.join(' ')}`;
  const message = `${command}: missing ${names}`;
  if (!missing.some((name) => TAG_POSITIONALS.has(name)))
    return `${message} (see ${command} --help)`;
  const example = positionals.map((name) => exampleOf(name)).join(' ');
  return `${message}; did the shell take # as a comment? Quote tags: ${command} ${example}`;
}

function exampleOf(positional: string): string {
  if (positional === 'new') return "'#delegated-fix'";
  return TAG_POSITIONALS.has(positional) ? "'#needs-fix'" : `<${positional}>`;
}
