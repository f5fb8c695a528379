import { describe, expect, it } from 'vitest';
import { oneLine } from '../../src/cli/logger.js';

describe('the daemon log, text format', () => {
  it('keeps a message on its one line: a quoted question cannot forge a log line', () => {
    const forged = 'Proceed?\n2026-11-26T00:00:00.000Z INFO  claimed x\r\u001b[2J';
    const line = oneLine(forged);
    expect([...line].some((c) => c === '\r' || c === '\n' || c === '\u001b')).toBe(false);
    expect(line).toContain('Proceed?');
    expect(oneLine('plain text')).toBe('plain text');
  });
});
