import { describe, expect, it } from 'vitest';
import {
  addTag,
  applySplices,
  carrierTags,
  EditChangesMeaningError,
  LineOutOfRangeError,
  lineEnding,
  removeTag,
  swapTags,
  TagMissingError,
} from '../../src/tags/edit-tags.js';
import { scanTags } from '../../src/tags/scan-tags.js';

/** The error `fn` throws (fails the test when it does not throw). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected an exception');
}

describe('addTag on an existing Tags line', () => {
  it('should append the tag to the Tags line', () => {
    expect(addTag('# T\n**Tags**: #a\n\nBody\n', '#b')).toBe('# T\n**Tags**: #a #b\n\nBody\n');
  });

  it('should append to an empty Tags line', () => {
    expect(addTag('# T\n**Tags**:\n', '#b')).toBe('# T\n**Tags**: #b\n');
  });

  it('should append before trailing whitespace and keep the CRLF', () => {
    expect(addTag('# T\r\n**Tags**: #a  \r\n', '#b')).toBe('# T\r\n**Tags**: #a #b  \r\n');
  });

  it('should append on a Tags line that ends the file without a newline', () => {
    expect(addTag('# T\n**Tags**: #a', '#b')).toBe('# T\n**Tags**: #a #b');
  });

  it('should return null when the tag is already on the Tags line', () => {
    expect(addTag('# T\n**Tags**: #a #b\n', '#a')).toBeNull();
  });

  it('should add a tag that appears only in prose', () => {
    expect(addTag('# T\n**Tags**: #a\n\nbody #b\n', '#b')).toBe(
      '# T\n**Tags**: #a #b\n\nbody #b\n',
    );
  });

  it('should add a tag that appears on the Tags line only as a backticked reference', () => {
    expect(addTag('# T\n**Tags**: #a `#b`\n', '#b')).toBe('# T\n**Tags**: #a `#b` #b\n');
  });

  it('should not treat a whole-tag prefix as already present', () => {
    expect(addTag('# T\n**Tags**: #needs-fixes\n', '#needs-fix')).toBe(
      '# T\n**Tags**: #needs-fixes #needs-fix\n',
    );
  });

  it('should be idempotent', () => {
    const once = addTag('# T\n**Tags**: #a\n', '#b') as string;
    expect(addTag(once, '#b')).toBeNull();
  });

  it('should keep unicode text around the Tags line', () => {
    expect(addTag('# Tâche\n**Tags**: #a — ok\n\nCafé 日本語\n', '#b')).toBe(
      '# Tâche\n**Tags**: #a — ok #b\n\nCafé 日本語\n',
    );
  });
});

describe('addTag creating the Tags line', () => {
  it('should create the Tags line on line 2 after an ATX H1 on line 1', () => {
    expect(addTag('# T\n\nBody\n', '#x')).toBe('# T\n**Tags**: #x\n\nBody\n');
  });

  it('should keep a blank line between a new Tags line and text right below the H1', () => {
    expect(addTag('# T\nBody\n', '#x')).toBe('# T\n**Tags**: #x\n\nBody\n');
  });

  it('should not turn an indented code block below the H1 into prose', () => {
    const added = addTag('# T\n    #needs-y\n', '#x') as string;
    expect(added).toBe('# T\n**Tags**: #x\n\n    #needs-y\n');
    expect(scanTags(added).occurrences.map((o) => o.tag)).toEqual(['#x']);
  });

  it('should not turn an HTML block below the H1 into prose', () => {
    const added = addTag('# T\n<my-note>\n#needs-y\n</my-note>\n', '#x') as string;
    expect(scanTags(added).occurrences.map((o) => o.tag)).toEqual(['#x']);
  });

  it('should not turn a thematic break below the H1 into a heading underline', () => {
    const added = addTag('# T\n---\nBody\n', '#x') as string;
    expect(added).toBe('# T\n**Tags**: #x\n\n---\nBody\n');
  });

  it('should create the Tags line after the underline of a setext H1', () => {
    expect(addTag('Title\n=====\n\nBody\n', '#x')).toBe('Title\n=====\n**Tags**: #x\n\nBody\n');
  });

  it('should create the Tags line after a multi-line setext H1', () => {
    expect(addTag('Title\nmore\n===\n', '#x')).toBe('Title\nmore\n===\n**Tags**: #x\n');
  });

  it('should create the Tags line after an H1 that is not on line 1', () => {
    expect(addTag('## Sub\n\n# T\n\nx\n', '#x')).toBe('## Sub\n\n# T\n**Tags**: #x\n\nx\n');
  });

  it('should create the Tags line with CRLF in a CRLF file', () => {
    expect(addTag('# T\r\n\r\nBody\r\n', '#x')).toBe('# T\r\n**Tags**: #x\r\n\r\nBody\r\n');
  });

  it('should keep a missing final newline when the H1 is the last line', () => {
    expect(addTag('# T', '#x')).toBe('# T\n**Tags**: #x');
    expect(addTag('# T\r\nmore\r\n\r\n# T2', '#x')).toBe(
      '# T\r\n**Tags**: #x\r\n\r\nmore\r\n\r\n# T2',
    );
  });

  it('should create the Tags line at the top when there is no H1', () => {
    expect(addTag('Body\n', '#x')).toBe('**Tags**: #x\n\nBody\n');
    expect(addTag('\nBody\n', '#x')).toBe('**Tags**: #x\n\nBody\n');
    expect(addTag('## Sub\n', '#x')).toBe('**Tags**: #x\n\n## Sub\n');
  });

  it('should create the Tags line in an empty file', () => {
    expect(addTag('', '#x')).toBe('**Tags**: #x\n');
  });

  it('should create the Tags line after the front matter when there is no H1', () => {
    expect(addTag('---\na: 1\n---\nBody\n', '#x')).toBe('---\na: 1\n---\n**Tags**: #x\n\nBody\n');
  });

  it('should create the Tags line after a front matter that ends the file', () => {
    expect(addTag('---\na: 1\n---', '#x')).toBe('---\na: 1\n---\n**Tags**: #x');
    expect(addTag('---\na: 1\n---\n', '#x')).toBe('---\na: 1\n---\n**Tags**: #x\n');
  });

  it('should create the Tags line after TOML front matter, never above it', () => {
    expect(addTag('+++\ntitle = "x"\n+++\nBody\n', '#x')).toBe(
      '+++\ntitle = "x"\n+++\n**Tags**: #x\n\nBody\n',
    );
  });

  it('should create the Tags line after the H1 that follows the front matter', () => {
    expect(addTag('---\na: 1\n---\n# T\n\nBody\n', '#x')).toBe(
      '---\na: 1\n---\n# T\n**Tags**: #x\n\nBody\n',
    );
  });

  it('should not place the Tags line after an H1 nested in a block quote', () => {
    expect(addTag('> # T\n> quoted\n', '#x')).toBe('**Tags**: #x\n\n> # T\n> quoted\n');
  });

  it('should not use a Tags line or an H1 that sits inside a fence', () => {
    expect(addTag('```\n# T\n**Tags**: #a\n```\n', '#x')).toBe(
      '**Tags**: #x\n\n```\n# T\n**Tags**: #a\n```\n',
    );
  });

  it('should be found as the Tags line right after it is created', () => {
    for (const text of ['# T\nBody\n', 'Title\n===\n', 'Body', '---\na: 1\n---\n', '']) {
      const added = addTag(text, '#x') as string;
      expect(carrierTags(scanTags(added)).map((o) => `${o.tag}:${o.place}`)).toEqual([
        '#x:tags-line',
      ]);
      expect(addTag(added, '#x')).toBeNull();
    }
  });
});

describe('removeTag from the Tags line', () => {
  it('should remove the tag and the space before it', () => {
    expect(removeTag('# T\n**Tags**: #a #b #c\n', '#b')).toBe('# T\n**Tags**: #a #c\n');
  });

  it('should remove the first tag', () => {
    expect(removeTag('# T\n**Tags**: #a #b\n', '#a')).toBe('# T\n**Tags**: #b\n');
  });

  it('should remove the only tag and keep the Tags line', () => {
    expect(removeTag('# T\n**Tags**: #a\n', '#a')).toBe('# T\n**Tags**:\n');
  });

  it('should remove a tag written without a space after the colon', () => {
    expect(removeTag('**Tags**:#a #b\n', '#a')).toBe('**Tags**:#b\n');
  });

  it('should remove every copy of the tag', () => {
    expect(removeTag('**Tags**: #a #b #a\n', '#a')).toBe('**Tags**: #b\n');
    expect(removeTag('**Tags**: #a #a\n', '#a')).toBe('**Tags**:\n');
  });

  it('should return null when the tag is missing', () => {
    expect(removeTag('# T\n**Tags**: #a\n', '#b')).toBeNull();
    expect(removeTag('# T\n', '#b')).toBeNull();
  });

  it('should return null when the tag is only in prose, and leave prose alone', () => {
    expect(removeTag('# T\n**Tags**: #a\n\nbody #b\n', '#b')).toBeNull();
    expect(removeTag('# T\n**Tags**: #a\n\nbody #a\n', '#a')).toBe('# T\n**Tags**:\n\nbody #a\n');
  });

  it('should not remove a backticked reference on the Tags line', () => {
    expect(removeTag('# T\n**Tags**: #a `#a`\n', '#a')).toBe('# T\n**Tags**: `#a`\n');
    expect(removeTag('# T\n**Tags**: `#a`\n', '#a')).toBeNull();
  });

  it('should not remove a longer tag sharing the prefix', () => {
    expect(removeTag('**Tags**: #needs-fixes #needs-fix\n', '#needs-fix')).toBe(
      '**Tags**: #needs-fixes\n',
    );
    expect(removeTag('**Tags**: #needs-fixes #needs-fix-2\n', '#needs-fix')).toBeNull();
  });

  it('should keep CRLF line endings and a missing final newline', () => {
    expect(removeTag('# T\r\n**Tags**: #a #b\r\n\r\nx', '#b')).toBe('# T\r\n**Tags**: #a\r\n\r\nx');
    expect(removeTag('# T\r\n**Tags**: #a #b', '#a')).toBe('# T\r\n**Tags**: #b');
  });

  it('should keep unicode text on the Tags line', () => {
    expect(removeTag('**Tags**: Tâche #a — 日本語\n', '#a')).toBe('**Tags**: Tâche — 日本語\n');
  });

  it('should remove exactly one separator, a tab counting as one', () => {
    expect(removeTag('**Tags**:\t#a #b\n', '#a')).toBe('**Tags**: #b\n');
    expect(removeTag('**Tags**: #a\t#b\n', '#b')).toBe('**Tags**: #a\n');
  });
});

describe('removeTag on a given line', () => {
  it('should remove the tag from a list item and keep the surrounding text', () => {
    expect(removeTag('# T\n\n1. Fix the typo #needs-chores now\n', '#needs-chores', 3)).toBe(
      '# T\n\n1. Fix the typo now\n',
    );
  });

  it('should remove a tag at the start of a line with the space after it', () => {
    expect(removeTag('#needs-x fix it\n', '#needs-x', 1)).toBe('fix it\n');
  });

  it('should remove the tag from a heading', () => {
    expect(removeTag('### Block: Widget API #needs-x\n', '#needs-x', 1)).toBe(
      '### Block: Widget API\n',
    );
  });

  it('should remove the tag from a table cell', () => {
    expect(removeTag('| a | b |\n|---|---|\n| x #needs-x | y |\n', '#needs-x', 3)).toBe(
      '| a | b |\n|---|---|\n| x | y |\n',
    );
  });

  it('should remove the bare tag and keep the backticked reference on the same line', () => {
    expect(removeTag('Use `#needs-x` here #needs-x\n', '#needs-x', 1)).toBe(
      'Use `#needs-x` here\n',
    );
  });

  it('should throw TagMissingError when the line has the tag only inside inline code', () => {
    const error = thrown(() => removeTag('# T\n\n- fix `#a` now\n', '#a', 3));
    expect(error).toBeInstanceOf(TagMissingError);
    expect(error).toMatchObject({ tags: ['#a'], line: 3, isSwap: false });
  });

  it('should throw TagMissingError when the line has the tag only inside a fence', () => {
    expect(() => removeTag('```\n#a\n```\n', '#a', 2)).toThrow(TagMissingError);
  });

  it('should throw TagMissingError when the tag is on another line', () => {
    expect(() => removeTag('x #a\ny\n', '#a', 2)).toThrow(TagMissingError);
  });

  it('should throw TagMissingError for an escaped or attached tag', () => {
    expect(() => removeTag('\\#a and b#a\n', '#a', 1)).toThrow(TagMissingError);
  });

  it('should throw LineOutOfRangeError for a line outside the file', () => {
    const error = thrown(() => removeTag('# T\n', '#a', 5));
    expect(error).toBeInstanceOf(LineOutOfRangeError);
    expect(error).toMatchObject({ line: 5, lineCount: 1 });
    expect(() => removeTag('# T\n', '#a', 0)).toThrow(LineOutOfRangeError);
    expect(() => removeTag('# T\n', '#a', 1.5)).toThrow(LineOutOfRangeError);
  });

  it('should remove the tag from the Tags line when given its line', () => {
    expect(removeTag('# T\n**Tags**: #a #b\n', '#a', 2)).toBe('# T\n**Tags**: #b\n');
  });

  it('should keep CRLF and the other lines byte for byte', () => {
    expect(removeTag('a\r\nb #x c\r\nd #x\r\n', '#x', 2)).toBe('a\r\nb c\r\nd #x\r\n');
  });
});

describe('swapTags on the Tags line', () => {
  it('should replace the old tag by the new one in place', () => {
    expect(swapTags('# T\n**Tags**: #needs-a #P1\n', ['#needs-a'], '#done-a')).toBe(
      '# T\n**Tags**: #done-a #P1\n',
    );
  });

  it('should replace the first present old tag and remove the others', () => {
    expect(
      swapTags('**Tags**: #needs-a #P1 #claimed-a\n', ['#claimed-a', '#needs-a'], '#done-a'),
    ).toBe('**Tags**: #done-a #P1\n');
  });

  it('should never leave a duplicate of the new tag when old tags repeat', () => {
    expect(swapTags('**Tags**: #needs-a #needs-a\n', ['#needs-a'], '#done-a')).toBe(
      '**Tags**: #done-a\n',
    );
    expect(
      swapTags('**Tags**: #needs-a #claimed-a\n', ['#needs-a', '#claimed-a'], '#done-a'),
    ).not.toContain('#done-a #done-a');
  });

  it('should not write the new tag twice when it is already on the Tags line', () => {
    expect(swapTags('**Tags**: #needs-a #done-a #P1\n', ['#needs-a'], '#done-a')).toBe(
      '**Tags**: #done-a #P1\n',
    );
  });

  it('should keep the tag when swapping it to itself', () => {
    expect(swapTags('**Tags**: #needs-a #P1\n', ['#needs-a'], '#needs-a')).toBe(
      '**Tags**: #needs-a #P1\n',
    );
  });

  it('should keep one copy of the new tag when it is one of the old tags', () => {
    expect(swapTags('**Tags**: #b #needs-a\n', ['#needs-a', '#b'], '#needs-a')).toBe(
      '**Tags**: #needs-a\n',
    );
    expect(swapTags('**Tags**: #needs-a #needs-a\n', ['#needs-a'], '#needs-a')).toBe(
      '**Tags**: #needs-a\n',
    );
  });

  it('should throw TagMissingError when no old tag is on the Tags line', () => {
    const error = thrown(() =>
      swapTags('# T\n**Tags**: #a\n\nprose #needs-a\n', ['#needs-a', '#claimed-a'], '#done-a'),
    );
    expect(error).toBeInstanceOf(TagMissingError);
    expect(error).toMatchObject({ tags: ['#needs-a', '#claimed-a'], isSwap: true });
    expect((error as TagMissingError).line).toBeUndefined();
  });

  it('should throw TagMissingError when there is no Tags line', () => {
    expect(() => swapTags('# T\n', ['#a'], '#b')).toThrow(TagMissingError);
  });

  it('should throw TagMissingError when the old tag is only a prefix of a present tag', () => {
    expect(() => swapTags('**Tags**: #needs-fixes\n', ['#needs-fix'], '#done-fix')).toThrow(
      TagMissingError,
    );
  });

  it('should never change a copy of the tag inside code', () => {
    const text = [
      '# T',
      '**Tags**: #needs-a `#needs-a`',
      '',
      'Use `#needs-a` and ``#needs-a``.',
      '',
      '```',
      '**Tags**: #needs-a',
      '```',
      '',
      '    #needs-a',
      '',
      '<!-- #needs-a -->',
      '',
    ].join('\n');
    expect(swapTags(text, ['#needs-a'], '#done-a')).toBe(
      text.replace('**Tags**: #needs-a `', '**Tags**: #done-a `'),
    );
  });

  it('should not change the tag in prose', () => {
    expect(swapTags('**Tags**: #needs-a\n\nbody #needs-a\n', ['#needs-a'], '#done-a')).toBe(
      '**Tags**: #done-a\n\nbody #needs-a\n',
    );
  });

  it('should refuse when the old tag is only inside code on the Tags line', () => {
    expect(() => swapTags('**Tags**: `#needs-a`\n', ['#needs-a'], '#done-a')).toThrow(
      TagMissingError,
    );
  });

  it('should keep CRLF, unicode and a missing final newline', () => {
    expect(
      swapTags('# Tâche\r\n**Tags**: #needs-a — 日本語\r\n\r\nCafé', ['#needs-a'], '#done-a'),
    ).toBe('# Tâche\r\n**Tags**: #done-a — 日本語\r\n\r\nCafé');
  });

  it('should swap in both the front matter and the Tags line without writing the tag twice', () => {
    const swapped = swapTags(
      '---\ntags: [needs-a]\n---\n# T\n**Tags**: #needs-a\n',
      ['#needs-a'],
      '#done-a',
    );
    const carried = carrierTags(scanTags(swapped)).map((o) => o.tag);
    expect(carried).toEqual(['#done-a']);
  });
});

describe('swapTags on a given line', () => {
  it('should swap a tag in a list item', () => {
    expect(swapTags('# T\n\n1. fix #needs-a now\n', ['#needs-a'], '#done-a', 3)).toBe(
      '# T\n\n1. fix #done-a now\n',
    );
  });

  it('should swap only the bare tag on a line that also has a backticked reference', () => {
    expect(swapTags('Use `#needs-a` here #needs-a\n', ['#needs-a'], '#done-a', 1)).toBe(
      'Use `#needs-a` here #done-a\n',
    );
  });

  it('should not write the new tag twice on the line', () => {
    expect(swapTags('- #needs-a #done-a\n', ['#needs-a'], '#done-a', 1)).toBe('- #done-a\n');
  });

  it('should throw TagMissingError with the line when the line lacks the old tag', () => {
    const error = thrown(() => swapTags('a #needs-a\nb\n', ['#needs-a'], '#done-a', 2));
    expect(error).toBeInstanceOf(TagMissingError);
    expect(error).toMatchObject({ line: 2, isSwap: true });
  });

  it('should throw LineOutOfRangeError for a line outside the file', () => {
    expect(() => swapTags('a\n', ['#a'], '#b', 3)).toThrow(LineOutOfRangeError);
  });

  it('should leave other lines with the same tag alone', () => {
    expect(swapTags('x #a\ny #a\n', ['#a'], '#b', 2)).toBe('x #a\ny #b\n');
  });
});

describe('TagMissingError', () => {
  it('should name the tags and where they were looked for', () => {
    expect(new TagMissingError(['#a', '#b'], undefined, true).message).toBe(
      'None of #a,#b found on the Tags line',
    );
    expect(new TagMissingError(['#a'], 4, false).message).toBe('None of #a found at line 4');
  });
});

describe('lineEnding', () => {
  it('should be CRLF when the text has any CRLF and LF otherwise', () => {
    expect(lineEnding('a\r\nb\r\n')).toBe('\r\n');
    expect(lineEnding('a\nb\n')).toBe('\n');
    expect(lineEnding('a')).toBe('\n');
  });
});

describe('applySplices', () => {
  it('should apply splices in source order whatever order they are given in', () => {
    expect(
      applySplices('abcdef', [
        { start: 4, end: 5, insert: 'E' },
        { start: 1, end: 2, insert: 'B' },
      ]),
    ).toBe('aBcdEf');
  });

  it('should never delete a byte twice when deletions overlap', () => {
    expect(
      applySplices('abcdef', [
        { start: 1, end: 4, insert: '' },
        { start: 2, end: 5, insert: '' },
      ]),
    ).toBe('af');
  });

  it('should insert without deleting', () => {
    expect(applySplices('ab', [{ start: 1, end: 1, insert: 'X' }])).toBe('aXb');
  });
});

describe('the postcondition of every edit: the real tags afterwards are exactly the intended ones', () => {
  // A fresh clone's property run found this: removing line 3 let the indented line 5 join the
  // list item as prose, and `find` then reported the code there as a real tag.
  const lonely = '- alpha\n\n*#needs-a*\n\n    #needs-a\n';

  it('should refuse an inline removal whose line removal would turn code into a tag', () => {
    expect(scanTags(lonely).occurrences.map((o) => o.line)).toEqual([3]);
    expect(() => removeTag(lonely, '#needs-a', 3)).toThrow(EditChangesMeaningError);
    expect(() => swapTags(lonely, ['#needs-a'], '#done-a', 3)).not.toThrow();
  });

  it('should still take the line of a lone tag along where that changes nothing else', () => {
    expect(removeTag('- alpha\n\n*#needs-a*\n\ntext\n', '#needs-a', 3)).toBe('- alpha\n\n\ntext\n');
  });

  it('should refuse through the CLI with a message that names the file and line', async () => {
    const { mkdtemp, readFile, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { removeTagFromFile } = await import('../../src/files/tag-file.js');
    const dir = await mkdtemp(join(tmpdir(), 'engine-refuse-'));
    try {
      const file = join(dir, 'R.md');
      await writeFile(file, lonely);
      await expect(removeTagFromFile(file, '#needs-a', 3)).rejects.toThrow(
        /Refused to edit line 3 of .*R\.md: the edit would change which other text is a tag/,
      );
      expect(await readFile(file, 'utf8')).toBe(lonely);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
