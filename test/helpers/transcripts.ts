/**
 * Transcripts (agent.log) for the tests of `engine logs` and its renderers (src/transcript/).
 */
import { readFileSync } from 'node:fs';

/** A real claude-print agent.log (tmux pipe-pane of `claude -p` 2.1.330 against the stand-in). */
export const PRINT_LOG = readFileSync(
  new URL('../fixtures/claude-print-agent.log', import.meta.url),
);

/** What PRINT_LOG reads as. */
export const PRINT_TEXT = [
  'Session 32c27fc8-0386-4cb1-90ee-b01a8e22803f (Claude Code 2.1.330, claude-opus-5-5) in /tmp/engine-claude-XEFGH8/project',
  '● Bash(echo "stand-in $((6 * 7))"; ls)',
  '  ⎿  stand-in 42',
  '● Write(/tmp/engine-claude-XEFGH8/project/notes.txt)',
  '  ⎿  File created successfully at: /tmp/engine-claude-XEFGH8/project/notes.txt (file state is current in your context — no need to Read it back)',
  '● Read(/tmp/engine-claude-XEFGH8/project/notes.txt)',
  '  ⎿  1\tfirst line',
  '     2\tsecond line',
  '     3',
  '● Wrote notes.txt and read it back.',
  '  All done.',
  'Result: success (completed), 4 turns, $0.0006, 0.4 s',
];

/**
 * An interactive agent's transcript with everything that upsets a terminal it is replayed into:
 * the alternate screen, mouse tracking, a hidden cursor, queries a terminal answers (DA, DSR),
 * colours; it ends inside the alternate screen (the agent was killed).
 */
export const HOSTILE_LOG =
  'wrapper: starting the agent\r\n' +
  '\u001b[?1049h\u001b[?1000h\u001b[?1006h\u001b[?25l\u001b[c\u001b[6n\u001b[>c' +
  '\u001b[H\u001b[2J\u001b[1;1HAgent TUI\u001b[3;5H\u001b[1;31mWorking on it\u001b[0m   ';
