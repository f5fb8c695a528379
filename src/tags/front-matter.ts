/**
 * Tags in YAML front matter: a top-level `tags:` key holding a string (`"#a #b"`, `a, b`) or a
 * list, entries with or without `#`. Parsed with the `yaml` package, which never runs code
 * (unlike gray-matter's `---js` engine). Entries are located by source offset so edits keep
 * every other byte. The same parse reads the `depends_on:` key (tags/depends-on-line.ts).
 */
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { dependencyEntries } from './depends-on-line.js';
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

export interface FrontMatter {
  tags: FrontMatterTag[];
  /** The `depends_on:` entries (docs/TAGS.md, "Depends On"), as written. */
  dependsOn: string[];
  problems: ScanProblem[];
}

/** Fresh arrays each time: the scan hands them on to callers. */
const nothing = (problems: ScanProblem[] = []): FrontMatter => ({
  tags: [],
  dependsOn: [],
  problems,
});

/** `start`/`end` are the offsets of the front matter node, fences included. */
export function scanFrontMatter(text: string, start: number, end: number): FrontMatter {
  const contentStart = text.indexOf('\n', start) + 1;
  const contentEnd = Math.max(contentStart, text.lastIndexOf('\n', end - 1) + 1);
  if (contentStart <= 0) return nothing();
  const source = text.slice(contentStart, contentEnd);
  const { isMap, isScalar, parseDocument } = loadYaml();
  // Problems name the line of the file, not of the front matter.
  const problem = (offset: number, message: string): ScanProblem => ({
    line: new LineIndex(text).lineOf(contentStart + Math.min(Math.max(offset, 0), source.length)),
    message,
  });
  let document: Yaml.Document.Parsed;
  try {
    document = parseDocument(source, { uniqueKeys: false });
  } catch (error) {
    return nothing([problem(0, `front matter is not valid YAML: ${String(error)}`)]);
  }
  const error = document.errors[0];
  if (error) {
    // YAML counts lines from the top of the front matter; the problem names the file's line.
    const message = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    const why = `front matter is not valid YAML, so its tags (and depends_on) are not read: ${message}`;
    return nothing([problem(error.pos[0], why)]);
  }
  const root = document.contents;
  if (!isMap(root)) return nothing();
  const problems: ScanProblem[] = [];
  // uniqueKeys: false: a key written twice is no error of the whole front matter (a `title:`
  // twice must not hide the tags), and each of these two is read here for itself.
  const pairsOf = (key: string): Yaml.Pair[] =>
    root.items.filter((pair) => isScalar(pair.key) && pair.key.value === key);
  const scalarsOf = (pair: Yaml.Pair, key: string, what: string): Yaml.Scalar[] =>
    stringScalars(pair.value as Yaml.Node | null, (node) =>
      problems.push(
        problem(
          node.range?.[0] ?? 0,
          `front matter \`${key}:\` holds something other than a string or a list of strings; it is not read as ${what}`,
        ),
      ),
    );
  const tagPairs = pairsOf('tags');
  const second = tagPairs[1]?.key as Yaml.Scalar | undefined;
  // Which of two `tags:` counts differs from tool to tool (the yaml package reads the first,
  // PyYAML the last): neither is read, and the file says why.
  if (second) {
    const why = 'front matter has `tags:` more than once, so its tags are not read';
    problems.push(problem(second.range?.[0] ?? 0, why));
  }
  const tags = (second ? [] : tagPairs)
    .flatMap((pair) => scalarsOf(pair, 'tags', 'tags'))
    .flatMap((scalar) => scalarTags(scalar, source, contentStart));
  // Every `depends_on:` key's entries, as the key and the line add up: an item waits for all of
  // them, whichever one another tool reads.
  const dependsOn = pairsOf('depends_on')
    .flatMap((pair) => scalarsOf(pair, 'depends_on', 'dependencies'))
    .flatMap((scalar) => dependencyEntries(String(scalar.value)));
  return { tags, dependsOn, problems };
}

/** A string (or number) scalar, or a list of them; `refuse` is told of any other node. */
function stringScalars(value: Yaml.Node | null, refuse: (node: Yaml.Node) => void): Yaml.Scalar[] {
  const { isScalar, isSeq } = loadYaml();
  if (!value) return [];
  const items = isSeq(value) ? value.items : [value];
  const scalars: Yaml.Scalar[] = [];
  for (const item of items) {
    // A bare entry such as `2024` is read by YAML as a number; its source is still a name.
    const ok = isScalar(item) && (typeof item.value === 'string' || typeof item.value === 'number');
    if (ok) scalars.push(item);
    // Other scalars (`tags:` left empty, `true`) are no entries: nothing to report.
    else if (item && !isScalar(item)) refuse(item as Yaml.Node);
  }
  return scalars;
}

/** The tags of one `tags:` scalar, located by source offset. */
function scalarTags(scalar: Yaml.Scalar, source: string, contentStart: number): FrontMatterTag[] {
  if (!scalar.range) return [];
  const [from, to] = scalar.range;
  const raw = source.slice(from, to);
  const tags: FrontMatterTag[] = [];
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
  return tags;
}
