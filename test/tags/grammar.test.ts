import { describe, expect, it } from 'vitest';
import { isTagBoundary, scanTags, type TagOccurrence } from '../../src/tags/scan-tags.js';

/** Every tag the locator reports, as `#tag@line:column:place`. */
const found = (text: string): string[] =>
  scanTags(text).occurrences.map((o) => `${o.tag}@${o.line}:${o.column}:${o.place}`);

/** Just the tag names the locator reports, in order. */
const names = (text: string): string[] => scanTags(text).occurrences.map((o) => o.tag);

/** The source characters of every occurrence: a tag is always located by its own bytes. */
const sources = (text: string): string[] =>
  scanTags(text).occurrences.map((o: TagOccurrence) => text.slice(o.start, o.end));

describe('tag names', () => {
  it('should find a lifecycle tag for every state', () => {
    const states = ['needs', 'delegated', 'next', 'claimed', 'done', 'active'];
    const text = states.map((s) => `- #${s}-fix`).join('\n') + '\n';
    expect(names(text)).toEqual(states.map((s) => `#${s}-fix`));
  });

  it('should find the weight tags #P0 #P1 #P2 and #S #M #L', () => {
    expect(names('Weights #P0 #P1 #P2 #S #M #L\n')).toEqual([
      '#P0',
      '#P1',
      '#P2',
      '#S',
      '#M',
      '#L',
    ]);
  });

  it('should find a tag whose name starts with a digit', () => {
    expect(names('see #2fa-review and #1\n')).toEqual(['#2fa-review', '#1']);
  });

  it('should not treat a # followed by a hyphen as a tag', () => {
    expect(names('a #-x b\n')).toEqual([]);
  });

  it('should not treat a lone # as a tag', () => {
    expect(names('a # b\n')).toEqual([]);
  });

  it('should take the longest run of name characters, trailing hyphens included', () => {
    expect(names('#needs-x- and #needs-x--y\n')).toEqual(['#needs-x-', '#needs-x--y']);
  });

  it('should end a tag at punctuation that is not a name character', () => {
    expect(names('#needs-x. (#needs-y) #needs-z, #needs-w: #a/b #c!\n')).toEqual([
      '#needs-x',
      '#needs-y',
      '#needs-z',
      '#needs-w',
      '#a',
      '#c',
    ]);
  });

  it('should locate every tag by its own source characters', () => {
    const text = '# T\n**Tags**: #a #b\n\nText #needs-x and *#needs-y*\n';
    expect(sources(text)).toEqual(['#a', '#b', '#needs-x', '#needs-y']);
  });

  it('should report 1-based lines and columns', () => {
    expect(found('one\n\n  two #needs-x\n')).toEqual(['#needs-x@3:7:prose']);
  });
});

describe('whole-tag matching', () => {
  it('should not report #needs-fix for #needs-fixes, #needs-fix-2 or #needs-fi', () => {
    const tags = names('#needs-fixes #needs-fix-2 #needs-fi\n');
    expect(tags).toEqual(['#needs-fixes', '#needs-fix-2', '#needs-fi']);
    expect(tags).not.toContain('#needs-fix');
  });

  it('should not treat a run followed by an underscore as a tag', () => {
    expect(names('#needs_fix\n')).toEqual([]);
  });

  it('should not treat a run followed by a non-ASCII letter as a tag', () => {
    expect(names('#needs-fixé\n')).toEqual([]);
  });

  it('should not treat a run followed by a decomposed accent (combining mark) as a tag', () => {
    expect(names('#needs-fixe\u0301 here\n')).toEqual([]);
  });

  it('should not treat a run followed by a non-ASCII digit as a tag', () => {
    expect(names('#needs-fix٣\n')).toEqual([]);
  });

  it('should not treat a run followed by an astral-plane letter as a tag', () => {
    expect(names('#x\u{20000}\n')).toEqual([]);
  });

  it('should not find a second tag glued to the end of the first', () => {
    expect(names('#a#b\n')).toEqual(['#a']);
  });
});

describe('attached hashes', () => {
  it.each([
    ['a URL fragment', 'https://example.com/page#needs-fix'],
    ['a path fragment', 'docs/page.md/#needs-fix'],
    ['a word', 'foo#needs-fix'],
    ['a digit', 'v2#needs-fix'],
    ['an HTML entity', '&#35;needs-fix'],
    ['a hexadecimal HTML entity', '&#x23;needs-fix'],
    ['a hyphen', 'a-#needs-fix'],
    ['an underscore', 'a_#needs-fix'],
    ['another hash', '##needs-fix'],
    ['an accented letter', 'é#needs-fix'],
    ['a decomposed accent', 'e\u0301#needs-fix'],
    ['a non-Latin letter', 'Ω#needs-fix'],
    ['an astral-plane letter', '\u{20000}#needs-fix'],
    ['an Arabic-Indic digit', '١#needs-fix'],
  ])('should not treat a # preceded by %s as a tag', (_label, text) => {
    expect(names(`${text}\n`)).toEqual([]);
    expect(names(`Some words ${text} more words\n`)).toEqual([]);
  });

  it('should treat a # after a space that follows a unicode word as a tag', () => {
    expect(found('Tâche #needs-x\n')).toEqual(['#needs-x@1:7:prose']);
  });

  it('should treat a # after an astral-plane symbol and a space as a tag', () => {
    expect(names('🎉 #needs-x\n')).toEqual(['#needs-x']);
  });

  it('should treat a # after opening punctuation as a tag', () => {
    expect(names('(#a) [#b] "#c" \'#d\' :#e\n')).toEqual(['#a', '#b', '#c', '#d', '#e']);
  });

  it('should treat a # at the very start of the file as a tag', () => {
    expect(found('#needs-x first\n')).toEqual(['#needs-x@1:1:prose']);
  });

  it('should not treat a # preceded by a slash in a URL with a query as a tag', () => {
    expect(names('see https://example.com/a?b=1&#needs-fix\n')).toEqual([]);
  });
});

describe('headings', () => {
  it('should not treat an ATX heading marker as a tag', () => {
    expect(names('# Heading\n## Sub\n###### Deep\n')).toEqual([]);
  });

  it('should treat a tag in the text of a heading as a tag', () => {
    expect(found('### Block: Widget API #needs-x\n')).toEqual(['#needs-x@1:23:prose']);
  });

  it('should treat a tag as a tag when it is the whole text of an H1', () => {
    expect(found('# #needs-x\n')).toEqual(['#needs-x@1:3:prose']);
  });

  it('should not treat the closing hashes of an ATX heading as a tag', () => {
    expect(names('## Title #needs-x ##\n')).toEqual(['#needs-x']);
  });

  it('should treat a tag in a setext heading as a tag', () => {
    expect(found('Title #needs-x\n===\n')).toEqual(['#needs-x@1:7:prose']);
  });

  it('should treat #name without a space as a tag, not a heading', () => {
    expect(found('#Heading\n')).toEqual(['#Heading@1:1:prose']);
  });
});

describe('prose constructs', () => {
  it('should treat a tag in a paragraph as a tag', () => {
    expect(found('Para text #needs-x\n')).toEqual(['#needs-x@1:11:prose']);
  });

  it('should treat a tag on a continuation line of a paragraph as a tag', () => {
    expect(found('first line\n#needs-x second\n')).toEqual(['#needs-x@2:1:prose']);
  });

  it('should treat a tag in list items as a tag', () => {
    expect(found('- item #needs-x\n* star #needs-y\n1. Fix the typo #needs-chores\n')).toEqual([
      '#needs-x@1:8:prose',
      '#needs-y@2:8:prose',
      '#needs-chores@3:17:prose',
    ]);
  });

  it('should treat a tag in a task list item as a tag', () => {
    expect(found('- [ ] task #needs-x\n')).toEqual(['#needs-x@1:12:prose']);
  });

  it('should treat a tag in a table cell as a tag', () => {
    expect(found('| a | b |\n|---|---|\n| #needs-x | y |\n')).toEqual(['#needs-x@3:3:prose']);
  });

  it('should treat a tag in a table header cell as a tag', () => {
    expect(names('| #needs-x | b |\n|---|---|\n| a | y |\n')).toEqual(['#needs-x']);
  });

  it('should treat a tag in a block quote as a tag', () => {
    expect(found('> quote #needs-x\n> > nested #needs-y\n')).toEqual([
      '#needs-x@1:9:prose',
      '#needs-y@2:12:prose',
    ]);
  });

  it('should treat a tag in emphasis and strong emphasis as a tag', () => {
    expect(names('*emph #a* **strong #b** ***both #c***\n')).toEqual(['#a', '#b', '#c']);
  });

  it('should treat a tag that is the whole emphasised text as a tag', () => {
    expect(found('*#a* _#b_ **#c** __#d__ ~~#e~~\n')).toEqual([
      '#a@1:2:prose',
      '#b@1:7:prose',
      '#c@1:13:prose',
      '#d@1:20:prose',
      '#e@1:27:prose',
    ]);
  });

  it('should not treat a # right after an emphasised word as a tag', () => {
    expect(names('**foo**#bar and _foo_#baz\n')).toEqual([]);
  });

  it('should not treat emphasis running on into a word as a tag', () => {
    expect(names('*#x*foo\n')).toEqual([]);
  });

  it('should treat a tag in strikethrough as a tag', () => {
    expect(names('~~strike #needs-x~~\n')).toEqual(['#needs-x']);
  });

  it("should treat a tag in a link's text as a tag", () => {
    expect(found('[link #needs-x](http://a.example)\n')).toEqual(['#needs-x@1:7:prose']);
  });

  it('should treat a tag in a footnote definition as a tag', () => {
    expect(names('x [^1]\n\n[^1]: note #needs-x\n')).toEqual(['#needs-x']);
  });

  it('should treat a tag between inline HTML tags as a tag', () => {
    expect(names('text <span>#needs-x</span>\n')).toEqual(['#needs-x']);
  });

  it('should treat a tag after a hard line break as a tag', () => {
    expect(found('a\\\n#needs-x\n')).toEqual(['#needs-x@2:1:prose']);
  });

  it('should treat a tag that ends the file without a newline as a tag', () => {
    expect(found('text #needs-x')).toEqual(['#needs-x@1:6:prose']);
  });
});

describe('inline code', () => {
  it.each([
    ['one backtick', '`#needs-x`'],
    ['two backticks', '``#needs-x``'],
    ['two backticks with padding', '`` #needs-x ``'],
    ['three backticks', '```#needs-x```'],
    ['a backtick inside', '`` a`#needs-x ``'],
  ])('should not treat a tag inside inline code with %s as a tag', (_label, code) => {
    expect(names(`Use ${code} here\n`)).toEqual([]);
  });

  it('should not treat a tag inside inline code that spans two lines as a tag', () => {
    expect(names('Use `code\n#needs-x` here\n')).toEqual([]);
  });

  it('should find the bare tag on a line that also has a backticked reference', () => {
    expect(found('Use `#needs-x` here #needs-x\n')).toEqual(['#needs-x@1:21:prose']);
  });

  it('should treat a tag as a tag when the backticks around it do not close', () => {
    expect(names('a `#needs-x\n')).toEqual(['#needs-x']);
  });

  it('should treat a tag right after inline code as a tag', () => {
    expect(names('`code` #needs-x\n')).toEqual(['#needs-x']);
  });
});

describe('fenced code blocks', () => {
  it('should not treat a tag inside a backtick fenced code block as a tag', () => {
    expect(names('```\n#needs-x\n```\n')).toEqual([]);
  });

  it('should not treat a tag inside a tilde fenced code block as a tag', () => {
    expect(names('~~~\n#needs-x\n~~~\n')).toEqual([]);
  });

  it('should not treat a tag inside a fence with an info string as a tag', () => {
    expect(names('```markdown\n**Tags**: #needs-x\n```\n')).toEqual([]);
  });

  it('should not treat a tag inside a longer fence containing a shorter one as a tag', () => {
    expect(names('````\n```\n#needs-x\n```\n````\n')).toEqual([]);
  });

  it('should not treat a tag inside an unclosed fence as a tag', () => {
    expect(names('text\n\n```\n#needs-x\n')).toEqual([]);
  });

  it('should not treat a tag inside a fence in a list item as a tag', () => {
    expect(names('- item\n\n  ```\n  #needs-x\n  ```\n')).toEqual([]);
  });

  it('should treat a tag right after a closed fence as a tag', () => {
    expect(found('```\n#needs-x\n```\n#needs-y\n')).toEqual(['#needs-y@4:1:prose']);
  });

  it('should not treat a tag inside a CRLF fenced code block as a tag', () => {
    expect(found('```\r\n#needs-x\r\n```\r\nafter #needs-y\r\n')).toEqual(['#needs-y@4:7:prose']);
  });
});

describe('indented code blocks', () => {
  it('should not treat a tag inside an indented code block as a tag', () => {
    expect(names('    #needs-x\n')).toEqual([]);
  });

  it('should not treat a tag inside a tab-indented code block as a tag', () => {
    expect(names('para\n\n\t#needs-x\n')).toEqual([]);
  });

  it('should treat an indented line that continues a paragraph as prose', () => {
    expect(names('para\n    #needs-x\n')).toEqual(['#needs-x']);
  });
});

describe('HTML', () => {
  it('should not treat a tag inside an HTML comment as a tag', () => {
    expect(names('<!-- #needs-x -->\n')).toEqual([]);
  });

  it('should not treat a tag inside a multi-line HTML comment as a tag', () => {
    expect(names('<!--\n#needs-x\n**Tags**: #needs-y\n-->\n')).toEqual([]);
  });

  it('should not treat a tag inside an inline HTML comment as a tag', () => {
    expect(names('text <!-- #needs-x --> more\n')).toEqual([]);
  });

  it('should not treat a tag inside an HTML block as a tag', () => {
    expect(names('<div>\n#needs-x\n</div>\n')).toEqual([]);
  });

  it('should not treat a tag inside an HTML attribute as a tag', () => {
    expect(names('text <a href="#needs-x">x</a>\n')).toEqual([]);
  });
});

describe('links', () => {
  it('should not treat a tag in a link destination as a tag', () => {
    expect(names('[see](#needs-x)\n')).toEqual([]);
  });

  it('should not treat a tag in an angle-bracketed link destination as a tag', () => {
    expect(names('[see](<#needs-x>)\n')).toEqual([]);
  });

  it('should not treat a tag in a link title as a tag', () => {
    expect(names('[see](x "#needs-x")\n')).toEqual([]);
  });

  it('should not treat a tag in a link reference definition as a tag', () => {
    expect(names('[see]: #needs-x\n[ref]: http://x.example "#needs-y"\n')).toEqual([]);
  });

  it('should not treat a tag in an image destination as a tag', () => {
    expect(names('![alt](#needs-x)\n')).toEqual([]);
  });

  it('should not treat a fragment in an autolink as a tag', () => {
    expect(names('<https://x.example/(a)#needs-fix>\n')).toEqual([]);
  });

  it('should not treat a fragment in a GFM autolink literal as a tag', () => {
    expect(names('see https://x.example/(a)#needs-fix and www.x.example/a=#needs-y\n')).toEqual([]);
  });

  it('should not treat a fragment after punctuation in a URL as a tag', () => {
    expect(names('see https://x.example/a.#needs-fix\n')).toEqual([]);
  });

  it('should treat a tag after a URL and a space as a tag', () => {
    expect(names('https://example.com/ #needs-fix\n')).toEqual(['#needs-fix']);
  });

  it('should treat a tag after a link as a tag', () => {
    expect(names('[see](http://x.example) #needs-x\n')).toEqual(['#needs-x']);
  });
});

describe('escapes and character references', () => {
  it('should not treat an escaped hash as a tag', () => {
    expect(names('\\#needs-x and a \\#needs-y\n')).toEqual([]);
  });

  it('should treat a hash after an escaped backslash as a tag', () => {
    expect(found('\\\\#needs-x\n')).toEqual(['#needs-x@1:3:prose']);
  });

  it('should not treat a hash after three backslashes as a tag', () => {
    expect(names('\\\\\\#needs-x\n')).toEqual([]);
  });

  it('should not treat a decimal character reference for # as a tag', () => {
    expect(names('&#35;needs-x\n')).toEqual([]);
  });

  it('should not treat a named character reference for # as a tag', () => {
    expect(names('&num;needs-x\n')).toEqual([]);
  });
});

describe('the Tags line', () => {
  it('should mark tags on the Tags line as tags-line and others as prose', () => {
    expect(found('# T\n**Tags**: #needs-fix #P1\n\nDo it #needs-x\n')).toEqual([
      '#needs-fix@2:11:tags-line',
      '#P1@2:22:tags-line',
      '#needs-x@4:7:prose',
    ]);
  });

  it('should report the span of the Tags line without its line ending', () => {
    const scan = scanTags('# T\r\n**Tags**: #a\r\n');
    expect(scan.tagsLine).toEqual({ line: 2, start: 5, end: 17 });
  });

  it('should take the first Tags line when there are two', () => {
    expect(found('**Tags**: #a\n**Tags**: #b\n')).toEqual(['#a@1:11:tags-line', '#b@2:11:prose']);
  });

  it('should not treat a Tags line inside a fenced code block as the Tags line', () => {
    const text = '```\n**Tags**: #a\n```\n**Tags**: #b\n';
    expect(scanTags(text).tagsLine?.line).toBe(4);
    expect(found(text)).toEqual(['#b@4:11:tags-line']);
  });

  it('should not treat a Tags line inside an indented code block as the Tags line', () => {
    expect(scanTags('    **Tags**: #a\n').tagsLine).toBeNull();
  });

  it('should not treat a Tags line inside an HTML comment as the Tags line', () => {
    expect(scanTags('<!--\n**Tags**: #a\n-->\n').tagsLine).toBeNull();
  });

  it('should not treat a Tags line inside inline code as the Tags line', () => {
    expect(scanTags('`x\n**Tags**: #a`\n').tagsLine).toBeNull();
  });

  it('should not treat an indented or quoted Tags line as the Tags line', () => {
    expect(scanTags('> **Tags**: #a\n').tagsLine).toBeNull();
    expect(scanTags(' **Tags** : #a\n').tagsLine).toBeNull();
  });

  it('should accept a Tags line without a space after the colon', () => {
    expect(found('**Tags**:#a\n')).toEqual(['#a@1:10:tags-line']);
  });

  it('should not treat a backticked reference on the Tags line as a tag', () => {
    expect(found('**Tags**: #a `#b`\n')).toEqual(['#a@1:11:tags-line']);
  });

  it('should find a Tags line that is not near the top', () => {
    expect(scanTags('# T\n\nIntro.\n\n**Tags**: #a\n').tagsLine?.line).toBe(5);
  });
});

describe('the title (H1)', () => {
  it('should report the line of an ATX H1', () => {
    expect(scanTags('# T\n').h1EndLine).toBe(1);
  });

  it('should report the underline of a setext H1', () => {
    expect(scanTags('Title\nmore\n=====\n').h1EndLine).toBe(3);
  });

  it('should ignore an H2 before the H1', () => {
    expect(scanTags('## Sub\n# T\n').h1EndLine).toBe(2);
  });

  it('should not treat an H1 inside a block quote or a list item as the title', () => {
    expect(scanTags('> # T\n').h1EndLine).toBeNull();
    expect(scanTags('- # T\n').h1EndLine).toBeNull();
  });

  it('should not treat an H1 inside a fence as the title', () => {
    expect(scanTags('```\n# T\n```\n').h1EndLine).toBeNull();
  });
});

describe('isTagBoundary', () => {
  it('should accept a free-standing tag', () => {
    const text = 'a #x b';
    expect(isTagBoundary(text, 2, 4)).toBe(true);
  });

  it('should refuse a tag attached before or after', () => {
    expect(isTagBoundary('a#x', 1, 3)).toBe(false);
    expect(isTagBoundary('#x_', 0, 2)).toBe(false);
  });

  it('should refuse an odd number of backslashes and accept an even number', () => {
    expect(isTagBoundary('\\#x', 1, 3)).toBe(false);
    expect(isTagBoundary('\\\\#x', 2, 4)).toBe(true);
  });
});
