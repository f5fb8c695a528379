import { expect, it } from 'vitest';
import { caretNotation } from '../../src/transcript/visible-text.js';

it('shows control characters in caret notation, and keeps tabs and line ends', () => {
  expect(caretNotation('a\u001b[31mb\u0007c\u007fd\u009be')).toBe('a^[[31mb^Gc^?d?e');
  expect(caretNotation('a\tb\nc\r\nd')).toBe('a\tb\nc\r\nd');
  // A CR that is no CRLF line end would move the cursor back over what was shown.
  expect(caretNotation('safe\rforged\r')).toBe('safe^Mforged^M');
  expect(caretNotation('ünïcode ✓')).toBe('ünïcode ✓');
});
