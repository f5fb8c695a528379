import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isExitedState, parseProcStat } from '../../src/process/proc-stat.js';
import { statLine } from './fake-probe.js';

describe('parseProcStat', () => {
  it('reads state and start time after the last ")" when comm has spaces and parens', () => {
    const line = statLine(4242, '(a) b (c)', 'S', '987654');
    expect(parseProcStat(line)).toEqual({
      pid: 4242,
      comm: '(a) b (c)',
      state: 'S',
      startTicks: '987654',
    });
  });

  it('handles comms that look like fields: ") R 1 2 3", "x) Z 9", "(", ")"', () => {
    for (const comm of [') R 1 2 3', 'x) Z 9 9 9', '(', ')', ' ', '))', 'a\nb']) {
      expect(parseProcStat(statLine(7, comm, 'S', '55'))).toEqual({
        pid: 7,
        comm,
        state: 'S',
        startTicks: '55',
      });
    }
  });

  it('parses a real line: /proc/self/stat', () => {
    const stat = parseProcStat(readFileSync('/proc/self/stat', 'utf8'));
    expect(stat?.pid).toBe(process.pid);
    expect(stat?.startTicks).toMatch(/^\d+$/);
    expect(stat?.state).toMatch(/^[A-Za-z]$/);
  });

  it('round-trips any comm of up to 15 characters (property)', () => {
    const char = fc.constantFrom('a', 'Z', ' ', '(', ')', '\t', '\n', '1', '-', 'é');
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4_194_304 }),
        fc.array(char, { maxLength: 15 }).map((cs) => cs.join('')),
        fc.constantFrom('R', 'S', 'D', 'Z', 'X', 'T', 'I'),
        fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
        (pid, comm, state, startTicks) => {
          expect(parseProcStat(statLine(pid, comm, state, startTicks))).toEqual({
            pid,
            comm,
            state,
            startTicks,
          });
        },
      ),
    );
  });

  it('returns null, never throws, for malformed text', () => {
    const malformed = [
      '',
      'garbage',
      '123',
      '123 (sleep',
      '123 (sleep)',
      '123 (sleep) ',
      '123 (sleep) S',
      '123 (sleep) S 1 2 3',
      'abc (sleep) S ' + Array(49).fill('1').join(' '),
      '0 (sleep) S ' + Array(49).fill('1').join(' '),
      '-5 (sleep) S ' + Array(49).fill('1').join(' '),
      '123 (sleep)S ' + Array(49).fill('1').join(' '),
      statLine(1, 'x', 'SS', '10'),
      statLine(1, 'x', '?', '10'),
      statLine(1, 'x', 'S', '-10'),
      statLine(1, 'x', 'S', '1e3'),
      statLine(1, 'x', 'S', ''),
      '\0\0\0',
    ];
    for (const text of malformed) expect(parseProcStat(text), JSON.stringify(text)).toBeNull();
  });

  it('treats Z, X and x as exited', () => {
    expect(['Z', 'X', 'x'].every(isExitedState)).toBe(true);
    expect(['R', 'S', 'D', 'T', 't', 'I', 'W', 'P'].some(isExitedState)).toBe(false);
  });
});
