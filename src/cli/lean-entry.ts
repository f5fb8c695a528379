/**
 * The lean path of `engine tag find` and `engine status`: a well-formed command line (only the
 * command's own flags, each once, as `--flag`, no `--`, no help, no positional `true` or
 * `false`) is parsed with node's parseArgs
 * and run by the command's own function (from the running daemon, else from the files), without
 * loading yargs or any other command (about 160 ms here). Anything else goes to the full CLI,
 * which says what it always says; an EngineError is printed as the full CLI prints it.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { EngineError } from '../errors.js';
import { printError } from './output.js';

/** The exit code when answered here; null: the full CLI takes the command line. */
export async function answerLean(argv: string[]): Promise<number | null> {
  try {
    if (argv[0] === 'tag' && argv[1] === 'find') return await leanFind(argv.slice(2));
    if (argv[0] === 'status') return await leanStatus(argv.slice(1));
  } catch (error) {
    if (error instanceof EngineError) {
      printError(error.message);
      return error.exitCode;
    }
    // A command line parseArgs refuses, or an unexpected error: the full CLI meets it again.
  }
  return null;
}

async function leanFind(args: string[]): Promise<number | null> {
  const parsed = parse(args, {
    context: { type: 'boolean' },
    'tags-only': { type: 'boolean' },
    json: { type: 'boolean' },
    verbose: { type: 'boolean' },
  });
  const [pattern, ...paths] = parsed?.positionals ?? [];
  if (!parsed || pattern === undefined) return null;
  const flag = (name: string): boolean => parsed.values[name] === true;
  const { tagFind } = await import('./tag-find.js');
  await tagFind({
    pattern,
    paths: paths.length > 0 ? paths : ['sessions/'],
    context: flag('context'),
    'tags-only': flag('tags-only'),
    json: flag('json'),
    verbose: flag('verbose'),
  });
  return 0;
}

async function leanStatus(args: string[]): Promise<number | null> {
  const parsed = parse(args, { root: { type: 'string' }, json: { type: 'boolean' } });
  if (!parsed) return null;
  const root = parsed.values.root;
  const { engineStatus } = await import('./status.js');
  await engineStatus({
    paths: parsed.positionals,
    root: typeof root === 'string' ? root : undefined,
    json: parsed.values.json === true,
  });
  return 0;
}

/** The flags and positionals of a plain command line; null for anything the full CLI should see. */
function parse(
  args: string[],
  options: NonNullable<ParseArgsConfig['options']>,
): { values: Record<string, unknown>; positionals: string[] } | null {
  const { values, positionals, tokens } = parseArgs({
    args,
    options,
    strict: true,
    allowPositionals: true,
    tokens: true,
  });
  const names = new Set<string>();
  for (const token of tokens) {
    if (token.kind === 'option-terminator') return null;
    if (token.kind === 'positional' && token.value.startsWith('-')) return null;
    // yargs takes `true` or `false` after a boolean flag as its value (`--json false`).
    if (token.kind === 'positional' && (token.value === 'true' || token.value === 'false'))
      return null;
    if (token.kind !== 'option') continue;
    // `-x` short forms and repeated flags: yargs' own rules apply.
    if (token.rawName !== `--${token.name}` || names.has(token.name)) return null;
    if (token.value?.startsWith('-')) return null;
    names.add(token.name);
  }
  return { values, positionals };
}
