import type { CommandModule } from 'yargs';
import { findTaggedFiles, type FileMatch } from '../tags/find-tagged-files.js';
import { LineIndex } from '../tags/line-index.js';
import { parseTagPattern } from '../tags/tag-name.js';
import { printJson, printLine, warn } from './output.js';

interface Args {
  pattern: string;
  paths: string[];
  context: boolean;
  'tags-only': boolean;
  json: boolean;
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
      .option('json', { type: 'boolean', default: false }) as never,
  handler: async (args) => {
    const pattern = parseTagPattern(args.pattern);
    const { matches, skipped } = await findTaggedFiles({
      paths: args.paths,
      pattern,
      tagsOnly: args['tags-only'],
    });
    for (const s of skipped) warn(`skipped ${s.path}: ${s.reason}`);
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

function printContext(match: FileMatch): void {
  const lines = new LineIndex(match.text);
  const seen = new Set<number>();
  for (const { line } of match.occurrences) {
    if (seen.has(line)) continue;
    seen.add(line);
    printLine(`${match.path}:${line}`);
    for (let k = Math.max(1, line - 1); k <= Math.min(lines.count, line + 1); k++) {
      printLine(`  ${k}: ${lines.lineText(k)}`);
    }
    printLine();
  }
}
