import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { CommandModule } from 'yargs';
import { EngineError } from '../errors.js';
import type { FindResult } from '../tags/find-tagged-files.js';
import { LineIndex } from '../tags/line-index.js';
import { decodeText } from '../tags/source-text.js';
import { parseTagPattern, type TagPattern } from '../tags/tag-name.js';
import type { TagOccurrence } from '../tags/scan-tags.js';
import { findFromDaemon, readingFiles } from './ask-daemon.js';
import { requireComplete, requireGivenPaths } from './given-paths.js';
import { printJson, printLine, printLines, warn } from './output.js';

export interface TagFindArgs {
  pattern: string;
  paths: string[];
  context: boolean;
  'tags-only': boolean;
  json: boolean;
  verbose: boolean;
}

type Args = TagFindArgs;

/** A match as printed: its text only for --context. */
interface Match {
  path: string;
  occurrences: Array<Pick<TagOccurrence, 'tag' | 'line' | 'column' | 'place'>>;
  text?: string;
}

type Found = Omit<FindResult, 'matches'> & { matches: Match[] };

export const tagFindCommand: CommandModule<object, Args> = {
  command: 'find <pattern> [paths..]',
  describe: "List files carrying a tag or a glob ('#delegated-*'); default path sessions/",
  builder: (yargs) =>
    yargs
      .positional('pattern', {
        type: 'string',
        demandOption: true,
        describe: "A tag or a glob, quoted: '#needs-fix', '#delegated-*'",
      })
      .positional('paths', {
        type: 'string',
        array: true,
        default: ['sessions/'],
        describe: 'Files or directories to search',
      })
      .option('context', {
        type: 'boolean',
        default: false,
        describe: 'Print file:N and lines N-1..N+1',
      })
      .option('tags-only', {
        type: 'boolean',
        default: false,
        describe: 'Tags line and front matter only',
      })
      .option('json', {
        type: 'boolean',
        default: false,
        describe: 'The matches as JSON, with each occurrence',
      })
      .option('verbose', {
        type: 'boolean',
        default: false,
        describe: 'Also name file:line of tags that could not be read (malformed front matter)',
      })
      .example("$0 tag find '#needs-fix'", 'The requests under sessions/ that need a fix')
      .example(
        "$0 tag find '#delegated-*' docs --context",
        'Every delegated item under docs/, with its lines',
      )
      .example("$0 tag find '#P0' --json", 'As JSON') as never,
  handler: async (args) => {
    await tagFind(args);
  },
};

/** Finds and prints: from the running daemon when it answers (docs/CLI.md), else from the files. */
export async function tagFind(args: Args): Promise<void> {
  const pattern = parseTagPattern(args.pattern);
  const scanTimeoutMs = scanTimeoutFromEnvironment();
  requireGivenPaths(args.paths, 'file or directory');
  const answer = await findFromDaemon(args.pattern, args.paths, args['tags-only']);
  const found = answer && withTexts(answer, args.context);
  if (!found) readingFiles();
  const result = found ?? (await findInFiles(args, pattern, scanTimeoutMs));
  printFound(result, args);
  requireComplete(result.skipped.length);
}

async function findInFiles(
  args: Args,
  pattern: TagPattern,
  scanTimeoutMs: number | undefined,
): Promise<Found> {
  const { findTaggedFiles } = await loadFind();
  return findTaggedFiles({
    paths: args.paths,
    pattern,
    tagsOnly: args['tags-only'],
    scanTimeoutMs,
    texts: args.context,
  });
}

type FindModule = typeof import('../tags/find-tagged-files.js');

/**
 * find over the files. From the CLI's CommonJS bundle (dist/cli/main.cjs), its own CommonJS
 * module beside it, required: an import() would start Node's ES module loader, about 40 ms
 * before the first read (scripts/bundle-lean.mjs). From tsc's ES modules and the sources, the
 * module itself.
 */
async function loadFind(): Promise<FindModule> {
  if (!import.meta.url.endsWith('.cjs')) return import('../tags/find-tagged-files.js');
  return createRequire(import.meta.url)('./find-files.cjs') as FindModule;
}

/** The daemon's answer with the texts --context prints, read here; null if one cannot be read. */
function withTexts(answer: Found, context: boolean): Found | null {
  if (!context) return answer;
  const matches: Match[] = [];
  for (const match of answer.matches) {
    let text;
    try {
      text = decodeText(readFileSync(match.path))?.text;
    } catch {
      return null;
    }
    if (text === undefined) return null;
    matches.push({ ...match, text });
  }
  return { ...answer, matches };
}

function printFound({ matches, skipped, problems }: Found, args: Args): void {
  for (const s of skipped) warn(`skipped ${s.path}: ${s.reason}`);
  if (args.verbose) for (const p of problems) warn(`${p.path}:${p.line}: ${p.message}`);
  if (args.json) {
    printJson(
      matches.map((m) => ({
        path: m.path,
        occurrences: m.occurrences.map(({ tag, line, column, place }) => ({
          tag,
          line,
          column,
          place,
        })),
      })),
    );
    return;
  }
  if (args.context) for (const match of matches) printContext(match);
  else printLines(matches.map((match) => match.path));
}

/** setTimeout's largest delay; a larger one would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * ENGINE_SCAN_TIMEOUT_MS: the time limit for parsing one file (default 3000). A file over it is
 * skipped and named on stderr.
 */
function scanTimeoutFromEnvironment(): number | undefined {
  const value = process.env.ENGINE_SCAN_TIMEOUT_MS;
  if (value === undefined || value === '') return undefined;
  const ms = /^[0-9]+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(ms) || ms < 1 || ms > MAX_TIMER_MS) {
    throw new EngineError(
      `Invalid ENGINE_SCAN_TIMEOUT_MS '${value}': expected a whole number of milliseconds from 1 to ${MAX_TIMER_MS}`,
    );
  }
  return ms;
}

function printContext(match: Match): void {
  const lines = new LineIndex(match.text ?? '');
  // Front matter entries come first in a scan; print in line order, each line once.
  const numbers = [...new Set(match.occurrences.map((o) => o.line))].sort((a, b) => a - b);
  for (const line of numbers) {
    printLine(`${match.path}:${line}`);
    for (let k = Math.max(1, line - 1); k <= Math.min(lines.count, line + 1); k++) {
      printLine(`  ${k}: ${lines.lineText(k)}`);
    }
    printLine();
  }
}
