/**
 * Text from files and agents shown on a terminal: its control characters in caret notation
 * (`^[`, `^?`; C1 characters as `?`), as `ls` shows a file name, so that no text a file or an
 * agent holds reaches the terminal as a command (colours, a window title, a clipboard write).
 * Tabs and line ends stay; a CR stays only before an LF (a CRLF line end).
 */
// eslint-disable-next-line no-control-regex -- control characters are what it makes visible
const CONTROL_CHAR = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]|\r(?!\n)/g;

export function caretNotation(text: string): string {
  return text.replace(CONTROL_CHAR, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x20 ? `^${String.fromCharCode(code + 64)}` : code === 0x7f ? '^?' : '?';
  });
}
