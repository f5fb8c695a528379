/**
 * Tags in YAML front matter: a top-level `tags:` key holding a string (`"#a #b"`, `a, b`) or a
 * list, entries with or without `#`. Parsed with the `yaml` package, which never runs code
 * (unlike gray-matter's `---js` engine). Entries are located by source offset so edits keep
 * every other byte.
 */
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { LineIndex } from './line-index.js';
import type { ScanProblem } from './tag-scan-types.js';

const require = createRequire(import.meta.url);
let yaml: typeof Yaml | null = null;

// Loaded on first use: most request files have no front matter, and loading the package costs
// about as much as the rest of a tag command's start-up.
function loadYaml(): typeof Yaml {
  return (yaml ??= require('yaml') as typeof Yaml);
}

export interface FrontMatterTag {
  tag: string;
  start: number;
  end: number;
  bare: boolean;
}

const WORD = /#?[A-Za-z0-9][A-Za-z0-9-]*/g;
const SEPARATOR = /[\s,'"[\]]/;

/** `start`/`end` are the offsets of the front matter node, fences included. */
export function scanFrontMatterTags(
  text: string,
  start: number,
  end: number,
): { tags: FrontMatterTag[]; problems: ScanProblem[] } {
  const contentStart = text.indexOf('\n', start) + 1;
  const contentEnd = Math.max(contentStart, text.lastIndexOf('\n', end - 1) + 1);
  if (contentStart <= 0) return { tags: [], problems: [] };
  const source = text.slice(contentStart, contentEnd);
  const { isMap, isScalar, isSeq, parseDocument } = loadYaml();
  // Problems name the line of the file, not of the front matter.
  const problem = (offset: number, message: string): ScanProblem => ({
    line: new LineIndex(text).lineOf(contentStart + Math.min(Math.max(offset, 0), source.length)),
    message,
  });
  let document: Yaml.Document.Parsed;
  try {
    document = parseDocument(source, { uniqueKeys: false });
  } catch (error) {
    return { tags: [], problems: [problem(0, `front matter is not valid YAML: ${String(error)}`)] };
  }
  const error = document.errors[0];
  if (error) {
    // YAML counts lines from the top of the front matter; the problem names the file's line.
    const message = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    return {
      tags: [],
      problems: [
        problem(
          error.pos[0],
          `front matter is not valid YAML, so its tags are not read: ${message}`,
        ),
      ],
    };
  }
  const root = document.contents;
  if (!isMap(root)) return { tags: [], problems: [] };
  const value = root.get('tags', true) as Yaml.Node | undefined;
  if (!value) return { tags: [], problems: [] };
  const problems: ScanProblem[] = [];
  const notTags = (node: Yaml.Node): void => {
    problems.push(
      problem(
        node.range?.[0] ?? 0,
        'front matter `tags:` holds something other than a string or a list of strings; it is not read as tags',
      ),
    );
  };
  let scalars: Yaml.Scalar[] = [];
  if (isSeq(value)) {
    for (const item of value.items) {
      if (isScalar(item)) scalars.push(item);
      else if (item) notTags(item as Yaml.Node);
    }
  } else if (isScalar(value)) scalars = [value];
  else notTags(value);
  const tags: FrontMatterTag[] = [];
  for (const scalar of scalars) {
    // A bare entry such as `2024` is read by YAML as a number; its source is still a tag name.
    const { value } = scalar;
    if ((typeof value !== 'string' && typeof value !== 'number') || !scalar.range) continue;
    const [from, to] = scalar.range;
    const raw = source.slice(from, to);
    for (const match of raw.matchAll(WORD)) {
      const at = from + (match.index ?? 0);
      const after = at + match[0].length;
      const before = source[at - 1];
      const next = source[after];
      if (before !== undefined && at > from && !SEPARATOR.test(before)) continue;
      if (next !== undefined && after < to && !SEPARATOR.test(next)) continue;
      const bare = !match[0].startsWith('#');
      tags.push({
        tag: bare ? `#${match[0]}` : match[0],
        start: contentStart + at,
        end: contentStart + after,
        bare,
      });
    }
  }
  return { tags, problems };
}
