/**
 * The lean path of `engine tag find` and `engine status`: a well-formed command line (only the
 * command's own flags, each once, no `--`, no help) parsed with node's parseArgs and answered by
 * the running daemon, without loading yargs (about 120 ms here) or any other command. Anything
 * else, and any error, is left to the full CLI, which then says what it always says.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** The exit code when answered here; null: the full CLI takes the command line. */
export async function answerLean(argv: string[]): Promise<number | null> {
  try {
    if (argv[0] === 'tag' && argv[1] === 'find') return await leanFind(argv.slice(2));
    if (argv[0] === 'status') return await leanStatus(argv.slice(1));
  } catch {
    // The full CLI meets the same error, and reports it as it always does.
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
  const printed = await tagFind(
    {
      pattern,
      paths: paths.length > 0 ? paths : ['sessions/'],
      context: flag('context'),
      'tags-only': flag('tags-only'),
      json: flag('json'),
      verbose: flag('verbose'),
    },
    false,
  );
  return printed ? 0 : null;
}

async function leanStatus(args: string[]): Promise<number | null> {
  const parsed = parse(args, { root: { type: 'string' }, json: { type: 'boolean' } });
  if (!parsed) return null;
  const root = parsed.values.root;
  const { engineStatus } = await import('./status.js');
  const printed = await engineStatus(
    {
      paths: parsed.positionals,
      root: typeof root === 'string' ? root : undefined,
      json: parsed.values.json === true,
    },
    false,
  );
  return printed ? 0 : null;
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
    if (token.kind !== 'option') continue;
    // `-x` short forms and repeated flags: yargs' own rules apply.
    if (token.rawName !== `--${token.name}` || names.has(token.name)) return null;
    if (token.value?.startsWith('-')) return null;
    names.add(token.name);
  }
  return { values, positionals };
}
