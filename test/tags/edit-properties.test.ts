/**
 * Property-based tests: random markdown documents built from fragments whose kind is known
 * (plain text, real tags, code), so the expected tags and the bytes an edit may touch are known.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addTag,
  carrierTags,
  EditChangesMeaningError,
  removeTag,
  swapTags,
  TagMissingError,
  TwoStatesError,
} from '../../src/tags/edit-tags.js';
import { lifecycleOf, nounsWithTwoStates } from '../../src/tags/tag-name.js';
import { scanTags, type TagOccurrence } from '../../src/tags/scan-tags.js';

/** Whether `tags` hold two lifecycle states of a noun of `touched`. */
function twoStatesOf(tags: string[], touched: string[]): boolean {
  const nouns = new Set(touched.map((tag) => lifecycleOf(tag)?.noun));
  return nounsWithTwoStates(tags).some((t) => nouns.has(t.noun));
}

type Kind = 'text' | 'tag' | 'code';
interface Seg {
  text: string;
  kind: Kind;
}
type Line = Seg[];
interface Block {
  kind: 'paragraph' | 'heading' | 'list' | 'quote' | 'fence' | 'indented' | 'html' | 'table';
  lines: Line[];
}
interface Spec {
  frontMatter: Line[] | null;
  h1: Line[] | null;
  tagsLine: Line | null;
  blocks: Block[];
  eol: '\n' | '\r\n';
  finalNewline: boolean;
}
interface PlacedSeg extends Seg {
  start: number;
  end: number;
  /** 1-based. */
  line: number;
}
interface Doc {
  text: string;
  eol: string;
  segs: PlacedSeg[];
  /** 1-based line of the Tags line, if the document has one. */
  tagsLineNo: number | null;
  /** 1-based last line of the H1, if any. */
  h1EndLine: number | null;
  /** 1-based last line of the front matter, if any. */
  frontMatterEndLine: number | null;
}

const TAGS = ['#needs-a', '#done-a', '#claimed-a', '#needs-b', '#P1', '#M'];
const NEW_TAGS = [...TAGS, '#active-z', '#needs-a-2'];
const WORDS = ['alpha', 'Tâche', 'café', 'naïve', '日本語', 'Ωmega', '🎉', 'x1', 'done.', '(see)'];
const CODE_TEXT = ['#needs-a', '#done-a x', '**Tags**: #needs-a', 'a #P1 b', '#claimed-a'];
/** Text that shows a tag's characters without being a tag. */
const NOT_TAGS = [
  '\\#needs-a',
  '&#35;needs-a',
  'foo#needs-a',
  'é#done-a',
  'https://x.example/p#needs-a',
  'https://x.example/(p)#done-a',
  '#needs-a_x',
  '##P1',
];

const seg = (text: string, kind: Kind = 'text'): Seg => ({ text, kind });

const wordArb = fc.constantFrom(...WORDS).map((w) => [seg(w)]);
const tagArb = fc.constantFrom(...TAGS).map((t) => [seg(t, 'tag')]);
const inlineCodeArb = fc
  .tuple(fc.constantFrom('`', '``', '```'), fc.constantFrom(...CODE_TEXT))
  .map(([ticks, code]) => [
    seg(ticks.length === 1 ? `${ticks}${code}${ticks}` : `${ticks} ${code} ${ticks}`, 'code'),
  ]);
const emphasisTagArb = fc
  .tuple(fc.constantFrom('*', '_', '**', '__', '~~'), fc.constantFrom(...TAGS))
  .map(([mark, tag]) => [seg(mark), seg(tag, 'tag'), seg(mark)]);
const notTagArb = fc.constantFrom(...NOT_TAGS).map((t) => [seg(t)]);

const tokenArb: fc.Arbitrary<Seg[]> = fc.oneof(
  { weight: 4, arbitrary: wordArb },
  { weight: 3, arbitrary: tagArb },
  { weight: 2, arbitrary: inlineCodeArb },
  { weight: 1, arbitrary: emphasisTagArb },
  { weight: 1, arbitrary: notTagArb },
);

const join = (tokens: Seg[][]): Line => tokens.flatMap((t, i) => (i === 0 ? t : [seg(' '), ...t]));
const inlineLineArb = fc.array(tokenArb, { minLength: 1, maxLength: 5 }).map(join);

const paragraphArb = fc
  .array(inlineLineArb, { minLength: 1, maxLength: 2 })
  .map((lines): Block => ({ kind: 'paragraph', lines }));
const headingArb = fc
  .tuple(fc.constantFrom('## ', '### '), inlineLineArb)
  .map(([mark, line]): Block => ({ kind: 'heading', lines: [[seg(mark), ...line]] }));
const listArb = fc
  .array(inlineLineArb, { minLength: 1, maxLength: 3 })
  .map((items): Block => ({ kind: 'list', lines: items.map((l) => [seg('- '), ...l]) }));
const quoteArb = fc
  .array(inlineLineArb, { minLength: 1, maxLength: 2 })
  .map((lines): Block => ({ kind: 'quote', lines: lines.map((l) => [seg('> '), ...l]) }));
const codeLineArb = fc.constantFrom(
  ...CODE_TEXT,
  '# not a heading #P1',
  'x = "#done-a" // Tâche',
  '',
);
const fenceArb = fc
  .tuple(
    fc.constantFrom('```', '~~~', '````', '```markdown'),
    fc.array(codeLineArb, { maxLength: 3 }),
  )
  .map(([fence, body]): Block => {
    const close = fence.startsWith('~') ? '~~~' : fence.replace('markdown', '');
    return {
      kind: 'fence',
      lines: [fence, ...body, close].map((l) => [seg(l, 'code')]),
    };
  });
const indentedArb = fc
  .array(
    codeLineArb.filter((l) => l !== ''),
    { minLength: 1, maxLength: 3 },
  )
  .map((body): Block => ({ kind: 'indented', lines: body.map((l) => [seg(`    ${l}`, 'code')]) }));
const htmlArb = fc
  .constantFrom(
    ['<!-- #needs-a -->'],
    ['<!--', '**Tags**: #done-a', '-->'],
    ['<div>', '#P1', '</div>'],
  )
  .map((lines): Block => ({ kind: 'html', lines: lines.map((l) => [seg(l, 'code')]) }));
const cellArb = fc.oneof(wordArb, tagArb, inlineCodeArb, emphasisTagArb);
const tableArb = fc
  .array(fc.tuple(cellArb, cellArb), { minLength: 1, maxLength: 2 })
  .map((rows): Block => ({
    kind: 'table',
    lines: [
      [seg('| a | b |')],
      [seg('| --- | --- |')],
      ...rows.map(([x, y]) => [seg('| '), ...x, seg(' | '), ...y, seg(' |')]),
    ],
  }));
const blockArb: fc.Arbitrary<Block> = fc.oneof(
  { weight: 4, arbitrary: paragraphArb },
  { weight: 2, arbitrary: headingArb },
  { weight: 2, arbitrary: listArb },
  { weight: 1, arbitrary: quoteArb },
  { weight: 2, arbitrary: fenceArb },
  { weight: 2, arbitrary: indentedArb },
  { weight: 1, arbitrary: htmlArb },
  { weight: 1, arbitrary: tableArb },
);

const frontMatterArb = fc.option(
  fc.constantFrom(['---', 'title: Tâche', 'note: "#needs-a"', '---'], ['---', '# #P1', '---']),
  { freq: 4 },
);
const h1Arb = fc.option(
  fc.oneof(
    inlineLineArb.map((line) => [[seg('# '), ...line]]),
    inlineLineArb.map((line) => [line, [seg('===')]]),
  ),
  { freq: 4, nil: null },
);
const tagsLineArb = fc.option(
  fc
    .tuple(
      fc.array(fc.oneof({ weight: 4, arbitrary: tagArb }, wordArb, inlineCodeArb), {
        maxLength: 4,
      }),
      fc.constantFrom('', '', ' ', '  '),
    )
    .map(([items, trailing]) => [
      seg('**Tags**:'),
      ...items.flatMap((t) => [seg(' '), ...t]),
      seg(trailing),
    ]),
  { freq: 5, nil: null },
);

/** `tagsLine`: whether the document has a Tags line always, never, or at random. */
function specArb(tagsLine: 'always' | 'never' | 'maybe'): fc.Arbitrary<Spec> {
  return fc.record({
    frontMatter: frontMatterArb.map((fm) => (fm ? fm.map((l) => [seg(l, 'code')]) : null)),
    h1: h1Arb,
    tagsLine:
      tagsLine === 'maybe'
        ? tagsLineArb
        : tagsLine === 'always'
          ? tagsLineArb.filter((l) => l !== null)
          : fc.constant(null),
    blocks: fc.array(blockArb, { maxLength: 3 }),
    eol: fc.constantFrom('\n' as const, '\r\n' as const),
    finalNewline: fc.boolean(),
  });
}

function render(spec: Spec): Doc {
  const lines: Line[] = [];
  let tagsLineNo: number | null = null;
  let h1EndLine: number | null = null;
  let frontMatterEndLine: number | null = null;
  if (spec.frontMatter) {
    lines.push(...spec.frontMatter);
    frontMatterEndLine = lines.length;
  }
  if (spec.h1) {
    lines.push(...spec.h1);
    h1EndLine = lines.length;
  }
  if (spec.tagsLine) {
    lines.push(spec.tagsLine);
    tagsLineNo = lines.length;
  }
  let previous: Block | null = null;
  for (const block of spec.blocks) {
    if (lines.length > 0) lines.push([]);
    // An indented block right after a list would continue the list item.
    if (block.kind === 'indented' && previous?.kind === 'list') {
      lines.push([seg('end of list')], []);
    }
    lines.push(...block.lines);
    previous = block;
  }
  let text = '';
  const segs: PlacedSeg[] = [];
  lines.forEach((line, i) => {
    for (const s of line) {
      if (s.text.length > 0)
        segs.push({ ...s, start: text.length, end: text.length + s.text.length, line: i + 1 });
      text += s.text;
    }
    if (i < lines.length - 1 || spec.finalNewline) text += spec.eol;
  });
  return { text, eol: spec.eol, segs, tagsLineNo, h1EndLine, frontMatterEndLine };
}

const docArb = specArb('maybe').map(render);
const withTagsLineArb = specArb('always').map(render);
const withoutTagsLineArb = specArb('never').map(render);
// Each run parses a few documents with remark (about a millisecond each): keep runs modest.
const RUNS = { numRuns: 200 };

/** Lines split on `\n`, each keeping any `\r`. */
const linesOf = (text: string): string[] => text.split('\n');

/** Every line except line `n` (1-based). */
const linesExcept = (text: string, n: number): string[] =>
  linesOf(text).filter((_, i) => i !== n - 1);

const inlineCodeOf = (line: string): string[] => line.match(/`+[^`]*`+/g) ?? [];

const summary = (occurrences: TagOccurrence[]): string[] =>
  occurrences.map((o) => `${o.tag}@${o.line}:${o.place}`);

const count = (tags: string[], tag: string): number => tags.filter((t) => t === tag).length;

/** The offset where line `n` (1-based) starts, or the text's length past the last line. */
function lineStartOffset(text: string, n: number): number {
  let offset = 0;
  for (let line = 1; line < n; line++) {
    const newline = text.indexOf('\n', offset);
    if (newline === -1) return text.length;
    offset = newline + 1;
  }
  return offset;
}

describe('scanTags on generated documents', () => {
  it('should report exactly the tags written in prose and on the Tags line, none inside code', () => {
    fc.assert(
      fc.property(docArb, (doc) => {
        const scan = scanTags(doc.text);
        const expected = doc.segs.filter((s) => s.kind === 'tag');
        expect(scan.occurrences.map((o) => `${o.tag}@${o.start}`)).toEqual(
          expected.map((s) => `${s.text}@${s.start}`),
        );
        const code = doc.segs.filter((s) => s.kind === 'code');
        for (const o of scan.occurrences) {
          expect(code.some((s) => o.start >= s.start && o.start < s.end)).toBe(false);
        }
        expect(scan.tagsLine?.line ?? null).toBe(doc.tagsLineNo);
        expect(scan.occurrences.filter((o) => o.place === 'tags-line').map((o) => o.tag)).toEqual(
          expected.filter((s) => s.line === doc.tagsLineNo).map((s) => s.text),
        );
      }),
      RUNS,
    );
  });

  it('should never throw on arbitrary text and locate every tag by its own bytes', () => {
    const chars = fc.constantFrom(
      ...'#`~*_-\\&;[]()<>!|:=\n\r \t#aA1é🎉'.split(''),
      '---\n',
      '**Tags**:',
      '```',
      '#needs-a',
    );
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 40 }), (parts) => {
        const text = parts.join('');
        for (const o of scanTags(text).occurrences) {
          if (!o.bare) expect(text.slice(o.start, o.end)).toBe(o.tag);
        }
      }),
      RUNS,
    );
  });

  it('should never throw on arbitrary YAML front matter', () => {
    const chars = fc.constantFrom(
      ...'tags:[]{}",\'#-\n :a1&*!|>?%@`'.split(''),
      'tags: ',
      '\n  - ',
    );
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 30 }), (parts) => {
        const scan = scanTags(`---\n${parts.join('')}\n---\n# T\n`);
        for (const problem of scan.problems) expect(problem.message).toMatch(/^front matter/);
      }),
      RUNS,
    );
  });
});

describe('swapTags on the Tags line of generated documents', () => {
  it('should change nothing but the swapped tag, and swapping back restores the original', () => {
    fc.assert(
      fc.property(withTagsLineArb, fc.nat(), fc.constantFrom(...NEW_TAGS), (doc, pick, next) => {
        const scan = scanTags(doc.text);
        const carriers = carrierTags(scan);
        const absent = NEW_TAGS.find((t) => !carriers.some((o) => o.tag === t)) as string;
        // With no old tag carried, the swap is refused.
        expect(() => swapTags(doc.text, [absent], next)).toThrow(TagMissingError);
        if (carriers.length === 0) return;
        const target = carriers[pick % carriers.length] as TagOccurrence;
        const old = target.tag;
        fc.pre(old !== next);
        // A swap that leaves a noun it touches two lifecycle states is refused.
        const carriedTags = carriers.map((o) => o.tag);
        if (twoStatesOf([...carriedTags.filter((t) => t !== old), next], [old, next])) {
          expect(() => swapTags(doc.text, [old], next)).toThrow(TwoStatesError);
          return;
        }
        const swapped = swapTags(doc.text, [old], next);
        const n = doc.tagsLineNo as number;
        // Every other line is byte-identical; inline code on the Tags line is kept.
        expect(linesExcept(swapped, n)).toEqual(linesExcept(doc.text, n));
        expect(inlineCodeOf(linesOf(swapped)[n - 1] as string)).toEqual(
          inlineCodeOf(linesOf(doc.text)[n - 1] as string),
        );
        const after = scanTags(swapped);
        const carriedAfter = carrierTags(after).map((o) => o.tag);
        expect(carriedAfter).not.toContain(old);
        // `next` is never written twice; copies that were already there are left alone.
        const already = count(
          carriers.map((o) => o.tag),
          next,
        );
        expect(count(carriedAfter, next)).toBe(Math.max(1, already));
        expect(summary(after.occurrences.filter((o) => o.place === 'prose'))).toEqual(
          summary(scan.occurrences.filter((o) => o.place === 'prose')),
        );
        if (
          count(
            carriers.map((o) => o.tag),
            old,
          ) === 1 &&
          already === 0 &&
          // Swapping back to two states of a noun is refused like any such edit.
          !twoStatesOf(carriedTags, [old])
        ) {
          // Only the tag's own bytes changed ...
          const without = (text: string, start: number, end: number) =>
            text.slice(0, start) + text.slice(end);
          expect(without(swapped, target.start, target.start + next.length)).toBe(
            without(doc.text, target.start, target.end),
          );
          expect(swapped.slice(target.start, target.start + next.length)).toBe(next);
          // ... and swapping back restores the original.
          expect(swapTags(swapped, [next], old)).toBe(doc.text);
        }
      }),
      RUNS,
    );
  });
});

describe('swapTags on an inline line of generated documents', () => {
  it('should change only the tag on that line, keeping code on the line', () => {
    fc.assert(
      fc.property(docArb, fc.nat(), fc.constantFrom(...NEW_TAGS), (doc, pick, next) => {
        const prose = scanTags(doc.text).occurrences.filter((o) => o.place === 'prose');
        fc.pre(prose.length > 0);
        const target = prose[pick % prose.length] as TagOccurrence;
        fc.pre(target.tag !== next);
        const swapped = swapTags(doc.text, [target.tag], next, target.line);
        expect(linesExcept(swapped, target.line)).toEqual(linesExcept(doc.text, target.line));
        const before = linesOf(doc.text)[target.line - 1] as string;
        const after = linesOf(swapped)[target.line - 1] as string;
        expect(inlineCodeOf(after)).toEqual(inlineCodeOf(before));
        const onLine = scanTags(swapped).occurrences.filter((o) => o.line === target.line);
        expect(onLine.map((o) => o.tag)).not.toContain(target.tag);
        const already = prose.filter((o) => o.line === target.line && o.tag === next).length;
        expect(onLine.filter((o) => o.tag === next)).toHaveLength(Math.max(1, already));
      }),
      RUNS,
    );
  });
});

describe('addTag and removeTag on the Tags line of generated documents', () => {
  it('should add and remove changing nothing but the Tags line, and undo each other', () => {
    fc.assert(
      fc.property(withTagsLineArb, fc.nat(), (doc, pick) => {
        const n = doc.tagsLineNo as number;
        const scan = scanTags(doc.text);
        const carriers = carrierTags(scan).map((o) => o.tag);
        const absent = NEW_TAGS.filter((t) => !carriers.includes(t));
        const tag = absent[pick % absent.length] as string;
        // A tag the Tags line lacks: removing it is a no-op, adding then removing restores,
        // unless its noun has a state there already: then adding it is refused.
        expect(removeTag(doc.text, tag)).toBeNull();
        if (twoStatesOf([...carriers, tag], [tag])) {
          expect(() => addTag(doc.text, tag)).toThrow(TwoStatesError);
        } else {
          const added = addTag(doc.text, tag) as string;
          expect(linesExcept(added, n)).toEqual(linesExcept(doc.text, n));
          expect(inlineCodeOf(linesOf(added)[n - 1] as string)).toEqual(
            inlineCodeOf(linesOf(doc.text)[n - 1] as string),
          );
          expect(carrierTags(scanTags(added)).map((o) => o.tag)).toEqual([...carriers, tag]);
          expect(removeTag(added, tag)).toBe(doc.text);
        }
        if (carriers.length === 0) return;
        // A tag the Tags line has: adding is a no-op, removing touches only the Tags line.
        const present = carriers[pick % carriers.length] as string;
        expect(addTag(doc.text, present)).toBeNull();
        const removed = removeTag(doc.text, present) as string;
        expect(linesExcept(removed, n)).toEqual(linesExcept(doc.text, n));
        expect(inlineCodeOf(linesOf(removed)[n - 1] as string)).toEqual(
          inlineCodeOf(linesOf(doc.text)[n - 1] as string),
        );
        expect(carrierTags(scanTags(removed)).map((o) => o.tag)).toEqual(
          carriers.filter((t) => t !== present),
        );
        const targets = carrierTags(scan).filter((o) => o.tag === present);
        if (targets.length === 1) {
          // Exactly the tag and one separator went.
          const { start, end } = targets[0] as TagOccurrence;
          expect([
            doc.text.slice(0, start - 1) + doc.text.slice(end),
            doc.text.slice(0, start) + doc.text.slice(end + 1),
            doc.text.slice(0, start) + doc.text.slice(end),
          ]).toContain(removed);
        }
      }),
      RUNS,
    );
  });
});

describe('addTag creating the Tags line in generated documents', () => {
  it('should insert the line after the H1 or the front matter and keep every other byte', () => {
    fc.assert(
      fc.property(withoutTagsLineArb, fc.constantFrom(...NEW_TAGS), (doc, tag) => {
        const added = addTag(doc.text, tag) as string;
        const line = `**Tags**: ${tag}`;
        // A one-line document has no line ending to copy: LF.
        const eol = doc.text.includes('\r\n') ? '\r\n' : '\n';
        const after = doc.h1EndLine ?? doc.frontMatterEndLine ?? 0;
        const at = lineStartOffset(doc.text, after + 1);
        if (after > 0 && at === doc.text.length && !doc.text.endsWith('\n')) {
          // At the end of a file without a final newline: still no final newline.
          expect(added).toBe(`${doc.text}${eol}${line}`);
        } else {
          const rest = doc.text.slice(at);
          const blank = rest.length > 0 && !/^\r?\n/.test(rest) ? eol : '';
          expect(added).toBe(`${doc.text.slice(0, at)}${line}${eol}${blank}${rest}`);
        }
        const scan = scanTags(added);
        expect(scan.tagsLine?.line).toBe(after + 1);
        expect(carrierTags(scan).map((o) => o.tag)).toEqual([tag]);
        // Nothing that was code became prose.
        expect(scan.occurrences.filter((o) => o.place === 'prose').map((o) => o.tag)).toEqual(
          scanTags(doc.text).occurrences.map((o) => o.tag),
        );
      }),
      RUNS,
    );
  });
});

describe('removeTag on an inline line of generated documents', () => {
  it('should remove the tag from its line only, keeping code on that line', () => {
    fc.assert(
      fc.property(docArb, fc.nat(), (doc, pick) => {
        const scan = scanTags(doc.text);
        const prose = scan.occurrences.filter((o) => o.place === 'prose');
        fc.pre(prose.length > 0);
        const target = prose[pick % prose.length] as TagOccurrence;
        let removed: string;
        try {
          removed = removeTag(doc.text, target.tag, target.line) as string;
        } catch (error) {
          // Refused: every way of removing it would change which other text is a tag.
          if (error instanceof EditChangesMeaningError) return;
          throw error;
        }
        const others = linesExcept(doc.text, target.line);
        if (linesOf(removed).length < linesOf(doc.text).length) {
          // The tag was alone on its line: the line went with it, and one line ending.
          const start = lineStartOffset(doc.text, target.line);
          const next = lineStartOffset(doc.text, target.line + 1);
          expect(removed).toBe(
            doc.text[next - 1] === '\n'
              ? doc.text.slice(0, start) + doc.text.slice(next)
              : doc.text.slice(0, start).replace(/\r?\n$/, ''),
          );
        } else {
          expect(linesExcept(removed, target.line)).toEqual(others);
          const before = linesOf(doc.text)[target.line - 1] as string;
          const after = linesOf(removed)[target.line - 1] as string;
          expect(inlineCodeOf(after)).toEqual(inlineCodeOf(before));
        }
        // Every other tag is still there.
        const left = scanTags(removed).occurrences.map((o) => o.tag);
        const expected = scan.occurrences
          .filter((o) => !(o.line === target.line && o.tag === target.tag))
          .map((o) => o.tag);
        expect(left).toEqual(expected);
      }),
      RUNS,
    );
  });

  it('should refuse an inline removal on a line where the tag is only in code', () => {
    fc.assert(
      fc.property(docArb, fc.nat(), (doc, pick) => {
        const spans = doc.segs.filter((s) => s.kind === 'code' && /#[A-Za-z0-9]/.test(s.text));
        fc.pre(spans.length > 0);
        const span = spans[pick % spans.length] as PlacedSeg;
        const tag = (/#[A-Za-z0-9][A-Za-z0-9-]*/.exec(span.text) as RegExpExecArray)[0];
        const onLine = doc.segs.some(
          (s) => s.kind === 'tag' && s.line === span.line && s.text === tag,
        );
        fc.pre(!onLine);
        expect(() => removeTag(doc.text, tag, span.line)).toThrow(TagMissingError);
      }),
      RUNS,
    );
  });
});
