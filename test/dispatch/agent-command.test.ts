import { describe, expect, it } from 'vitest';
import { fillTemplate, findProgram, splitTemplate } from '../../src/dispatch/agent-command.js';

describe('agent command templates', () => {
  it('splits like a shell, without any expansion', () => {
    expect(splitTemplate(`claude '{skill} {file}'`)).toEqual(['claude', '{skill} {file}']);
    expect(splitTemplate(`a "b c" d\\ e 'f"g' $(x) \`y\` ;`)).toEqual([
      'a',
      'b c',
      'd e',
      'f"g',
      '$(x)',
      '`y`',
      ';',
    ]);
    expect(splitTemplate(`x ''`)).toEqual(['x', '']);
  });

  it('fills placeholders inside their own argument, so hostile names stay one literal argument', () => {
    const words = splitTemplate('agent --file {file} {skill}');
    const hostile = `a; rm -rf b $(touch x) 'q" \n-x.md`;
    expect(
      fillTemplate(words, {
        skill: '/fix',
        noun: 'fix',
        file: hostile,
        session: 's',
        tag: '#claimed-fix',
        agent_session: 'a',
        prior_agent_session: '',
      }),
    ).toEqual(['agent', '--file', hostile, '/fix']);
  });

  it('rejects unclosed quotes, empty templates and unknown placeholders', () => {
    expect(() => splitTemplate(`claude '{file}`)).toThrow(/unclosed ' quote/);
    expect(() => splitTemplate('   ')).toThrow(/empty/);
    expect(() => splitTemplate('claude {prompt}')).toThrow(/unknown placeholder \{prompt\}/);
    expect(() => splitTemplate('claude {agent_sesion}')).toThrow(/unknown placeholder/);
  });

  it('finds programs on PATH like execvp', () => {
    expect(findProgram('sh')).toMatch(/\/sh$/);
    expect(findProgram('surely-not-a-program-xyz')).toBeNull();
    expect(findProgram(process.execPath)).toBe(process.execPath);
  });
});
