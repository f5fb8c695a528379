import type { CommandModule } from 'yargs';
import { EngineError } from '../errors.js';
import type { FileMatch } from '../tags/find-tagged-files.js';
import { LineIndex } from '../tags/line-index.js';
import { parseTagPattern } from '../tags/tag-name.js';
import { printJson, printLine, warn } from './output.js';

interface Args {
  pattern: string;
  paths: string[];
  context: boolean;
  'tags-only': boolean;
  json: boolean;
  verbose: boolean;
}

export const tagFindCommand: CommandModule<object, Args> = {
  command: 'find <pattern> [paths..]',
  describe: "List files carrying a tag or a glob ('#delegated-*'); default path sessions/",
  builder: (yargs) =>
    yargs
      .positional('pattern', { type: 'string', demandOption: true })
      .positional('paths', { type: 'string', array: true, default: ['sessions/'] })
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
      .option('json', { type: 'boolean', default: false })
      .option('verbose', {
        type: 'boolean',
        default: false,
        describe: 'Also name file:line of tags that could not be read (malformed front matter)',
      }) as never,
  handler: async (args) => {
    const pattern = parseTagPattern(args.pattern);
    const { findTaggedFiles } = await import('../tags/find-tagged-files.js');
    const { matches, skipped, problems } = await findTaggedFiles({
      paths: args.paths,
      pattern,
      tagsOnly: args['tags-only'],
      scanTimeoutMs: scanTimeoutFromEnvironment(),
    });
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
    for (const match of matches) {
      if (args.context) printContext(match);
      else printLine(match.path);
    }
  },
};

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

function printContext(match: FileMatch): void {
  const lines = new LineIndex(match.text);
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
