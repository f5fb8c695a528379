import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseDispatchTable } from '../../src/dispatch/dispatch-table.js';

describe('parseDispatchTable', () => {
  it('parses the shipped table with the rows of HANDOFF 5.2', () => {
    const table = parseDispatchTable(readFileSync('directives/TAGS.md', 'utf8'));
    expect([...table.keys()]).toEqual([
      'brainstorm',
      'research',
      'fix',
      'implementation',
      'loop',
      'chores',
      'documentation',
      'demo',
    ]);
    expect(table.get('loop')).toEqual({
      noun: 'loop',
      skill: '/loop',
      mode: 'interactive',
      priority: 4.5,
      dispatchable: true,
    });
  });

  it('parses the bullet-list form, and a Daemon "no" marks a row not dispatchable', () => {
    const table = parseDispatchTable(
      [
        '## §TAG_DISPATCH',
        '- `#delegated-fix`: skill `/fix`, mode agent, priority 3, daemon yes',
        '- `#delegated-manual`: skill `/manual`, mode interactive, priority 2, daemon no',
        '## Other',
        '- `#delegated-ignored`: skill `/x`, priority 1',
      ].join('\n'),
    );
    expect(table.get('fix')).toMatchObject({ skill: '/fix', priority: 3, dispatchable: true });
    expect(table.get('manual')).toMatchObject({ priority: 2, dispatchable: false });
    expect(table.has('ignored')).toBe(false);
  });

  it('reads columns by header name, in any order', () => {
    const table = parseDispatchTable(
      '# §TAG_DISPATCH\n| Priority | Tag | Daemon | Skill |\n|--|--|--|--|\n| 2 | `#delegated-x` | no | `/x` |\n',
    );
    expect(table.get('x')).toMatchObject({ skill: '/x', priority: 2, dispatchable: false });
  });

  it('rejects malformed tables with the line', () => {
    expect(() => parseDispatchTable('# nothing here\n')).toThrow(
      /^directives\/TAGS.md:1: no §TAG_DISPATCH section$/,
    );
    expect(() =>
      parseDispatchTable(
        '## §TAG_DISPATCH\n| Tag | Skill | Mode | Priority |\n|-|-|-|-|\n| `#delegated-x` | `/x` | a | soon |\n',
      ),
    ).toThrow(/directives\/TAGS.md:4: priority 'soon' is not a number/);
    expect(() =>
      parseDispatchTable(
        '## §TAG_DISPATCH\n- `#delegated-x`: skill `/x`, priority 1\n- `#delegated-x`: skill `/y`, priority 2\n',
      ),
    ).toThrow(/two rows/);
    expect(() => parseDispatchTable('# T\n## §TAG_DISPATCH\nno rows\n')).toThrow(
      /^directives\/TAGS.md:2: the §TAG_DISPATCH section has no rows$/,
    );
  });
});
