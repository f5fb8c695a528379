/**
 * The tag locator on remark's syntax tree (CommonMark + GFM + front matter): a tag is a match in
 * a text node's source, never in code, HTML, autolinks or front matter other than `tags:`.
 * remark is loaded on first use: a file the fast path decides never pays for loading it.
 */
import { createRequire } from 'node:module';
import type { Nodes, Root } from 'mdast';
import type { Processor } from 'unified';
import { TAG_IN_TEXT } from './tag-name.js';
import { scanFrontMatter, type FrontMatterTag } from './front-matter.js';
import { LineIndex } from './line-index.js';
import { withoutRecordTags } from './recovery-sections.js';
import { isTagBoundary, proseOccurrence } from './tag-boundary.js';
import type { LineSpan, ScanProblem, TagOccurrence, TagScan } from './tag-scan-types.js';

const require = createRequire(import.meta.url);
let processor: Processor<Root> | null = null;

/**
 * Drops the `transforms` of remark-gfm's mdast extensions. The only one, the autolink-literal
 * transform, re-links URLs that micromark left as text (after an unclosed `[`) and builds its
 * nodes without source positions, so every tag of that paragraph was lost. Without it, every
 * node has a position; such a URL stays text (docs/TAGS.md).
 */
function withoutTreeTransforms(this: Processor): void {
  const data = this.data() as { fromMarkdownExtensions?: unknown[] };
  const strip = (extension: unknown): unknown =>
    Array.isArray(extension) ? extension.map(strip) : { ...(extension as object), transforms: [] };
  data.fromMarkdownExtensions = (data.fromMarkdownExtensions ?? []).map(strip);
}

function parser(): Processor<Root> {
  if (!processor) {
    const { unified } = require('unified') as typeof import('unified');
    const remarkParse = (require('remark-parse') as typeof import('remark-parse')).default;
    const remarkGfm = (require('remark-gfm') as typeof import('remark-gfm')).default;
    const remarkFrontmatter = (require('remark-frontmatter') as typeof import('remark-frontmatter'))
      .default;
    processor = unified()
      .use(remarkParse)
      .use(remarkGfm)
      .use(withoutTreeTransforms)
      .use(remarkFrontmatter, ['yaml', 'toml']) as unknown as Processor<Root>;
  }
  return processor;
}

/** Node types whose content is never a tag. */
const OPAQUE = new Set(['code', 'inlineCode', 'html', 'yaml', 'toml']);
const FRONT_MATTER = new Set(['yaml', 'toml']);
const TAGS_LINE = /^\*\*Tags\*\*:/;
/**
 * An autolink (`<https://x.com/a#b>`) or a GFM autolink literal (`https://x.com/a#b`): its text
 * is its destination, so nothing in it is a tag. A link written `[text](url)` starts with `[`.
 */
function isAutolink(text: string, node: Nodes): boolean {
  const start = node.position?.start.offset;
  return node.type === 'link' && start !== undefined && text[start] !== '[';
}

export function scanTagsWithRemark(text: string): TagScan {
  const tree = parser().parse(text);
  const lines = new LineIndex(text);
  const opaque: Array<[number, number]> = [];
  const prose: TagOccurrence[] = [];
  let h1EndLine: number | null = null;
  let frontMatter: FrontMatterTag[] = [];
  let frontMatterDependsOn: string[] = [];
  let frontMatterEnd: number | null = null;
  const problems: ScanProblem[] = [];

  const visit = (node: Nodes): void => {
    const start = node.position?.start.offset;
    const end = node.position?.end.offset;
    if (OPAQUE.has(node.type) || isAutolink(text, node)) {
      if (start !== undefined && end !== undefined) opaque.push([start, end]);
      // TOML front matter (`+++`) carries no tags, but a created Tags line still goes below it.
      if (
        FRONT_MATTER.has(node.type) &&
        start !== undefined &&
        end !== undefined &&
        frontMatterEnd === null
      ) {
        frontMatterEnd = lines.endOfLineAt(end);
        if (node.type === 'yaml') {
          const scanned = scanFrontMatter(text, start, end);
          frontMatter = scanned.tags;
          frontMatterDependsOn = scanned.dependsOn;
          problems.push(...scanned.problems);
        }
      }
      return;
    }
    if (node.type === 'text') {
      // A text node without a position cannot be located: never drop its tags silently.
      if (start === undefined || end === undefined) {
        throw new Error('the markdown parser gave a text node without a source position');
      }
      collectProseTags(text, start, end, lines, prose);
      return;
    }
    if ('children' in node) for (const child of node.children) visit(child as Nodes);
  };
  visit(tree);
  // The title is a top-level H1: one nested in a block quote or a list item is not the title.
  for (const child of tree.children) {
    const endOffset = child.position?.end.offset;
    if (child.type === 'heading' && child.depth === 1 && endOffset !== undefined) {
      h1EndLine = lines.lineOf(endOffset);
      break;
    }
  }

  const tagsLine = findTagsLine(text, lines, opaque);
  const occurrences: TagOccurrence[] = [
    ...frontMatter.map((entry) => ({
      ...entry,
      ...lines.position(entry.start),
      place: 'front-matter' as const,
    })),
    ...prose.map((entry) =>
      tagsLine && entry.start >= tagsLine.start && entry.end <= tagsLine.end
        ? { ...entry, place: 'tags-line' as const }
        : entry,
    ),
  ];
  const isProse = (line: number): boolean => {
    const start = lines.span(line).start;
    return !opaque.some(([from, to]) => start >= from && start < to);
  };
  return {
    occurrences: withoutRecordTags(text, occurrences, lines, isProse),
    tagsLine,
    h1EndLine,
    frontMatterEnd,
    frontMatterDependsOn,
    problems,
    lines,
    isProse,
  };
}

function collectProseTags(
  text: string,
  start: number,
  end: number,
  lines: LineIndex,
  into: TagOccurrence[],
): void {
  const slice = text.slice(start, end);
  for (const match of slice.matchAll(TAG_IN_TEXT)) {
    const at = start + (match.index ?? 0);
    const after = at + match[0].length;
    if (!isTagBoundary(text, at, after, start, end)) continue;
    into.push(proseOccurrence(match[0], at, lines));
  }
}

function findTagsLine(
  text: string,
  lines: LineIndex,
  opaque: Array<[number, number]>,
): LineSpan | null {
  for (let line = 1; line <= lines.count; line++) {
    const span = lines.span(line);
    if (!TAGS_LINE.test(text.slice(span.start, span.start + 9))) continue;
    if (opaque.some(([from, to]) => span.start >= from && span.start < to)) continue;
    return span;
  }
  return null;
}
