import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseDispatchTable } from '../../src/dispatch/dispatch-table.js';

describe('parseDispatchTable', () => {
  it('parses the shipped table: the rows of HANDOFF 5.2 but loop (a Claude Code built-in) and demo', () => {
    const table = parseDispatchTable(readFileSync('directives/TAGS.md', 'utf8'));
    expect([...table.keys()]).toEqual([
      'brainstorm',
      'research',
      'fix',
      'implementation',
      'chores',
      'documentation',
    ]);
    expect(table.get('implementation')).toEqual({
      noun: 'implementation',
      skill: '/implement',
      mode: 'agent',
      priority: 4,
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

describe('the Max column', () => {
  it('reads a per-noun cap from the table and the bullet form; empty or - is no cap', () => {
    const table = parseDispatchTable(
      [
        '## §TAG_DISPATCH',
        '| Tag | Skill | Mode | Priority | Daemon | Max |',
        '|-|-|-|-|-|-|',
        '| `#delegated-research` | `/research` | agent | 2 | yes | 1 |',
        '| `#delegated-implement` | `/implement` | agent | 4 | yes | `4` |',
        '| `#delegated-fix` | `/fix` | agent | 3 | yes |  |',
        '| `#delegated-chores` | `/chores` | agent | 5 | yes | - |',
      ].join('\n'),
    );
    expect(table.get('research')?.max).toBe(1);
    expect(table.get('implement')?.max).toBe(4);
    expect(table.get('fix')?.max).toBeUndefined();
    expect(table.get('chores')?.max).toBeUndefined();
    const bullets = parseDispatchTable(
      '## §TAG_DISPATCH\n- `#delegated-fix`: skill `/fix`, priority 3, max 2\n- `#delegated-x`: skill `/x`, priority 1\n',
    );
    expect(bullets.get('fix')?.max).toBe(2);
    expect(bullets.get('x')?.max).toBeUndefined();
  });

  it('rejects a Max that is not a whole number from 1, naming the line', () => {
    const tableWith = (max: string) =>
      `# T\n## §TAG_DISPATCH\n| Tag | Skill | Mode | Priority | Daemon | Max |\n|-|-|-|-|-|-|\n| \`#delegated-x\` | \`/x\` | a | 1 | yes | ${max} |\n`;
    for (const bad of ['0', 'two', '1.5', '-1', '2 agents'])
      expect(() => parseDispatchTable(tableWith(bad))).toThrow(
        new RegExp(`^directives/TAGS.md:5: Max '${bad}' is not a whole number of agents from 1 up`),
      );
    expect(() =>
      parseDispatchTable('## §TAG_DISPATCH\n- `#delegated-x`: skill `/x`, priority 1, max: none\n'),
    ).toThrow(/^directives\/TAGS.md:2: Max 'none' is not a whole number/);
  });
});
