/**
 * The transcript renderers (src/transcript/): an interactive agent's terminal bytes as the text
 * its screen showed, a claude-print run's stream-json (a real one, test/fixtures) as a
 * conversation, and the tail the board shows.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Conversation } from '../../src/transcript/conversation.js';
import { ScreenText } from '../../src/transcript/screen-text.js';
import {
  renderTranscript,
  transcriptLines,
  transcriptTail,
} from '../../src/transcript/transcript-text.js';
import { craftedState } from '../helpers/crafted-state.js';
import { HOSTILE_LOG, PRINT_LOG, PRINT_TEXT } from '../helpers/transcripts.js';
import { makeTempDir, type TempDir } from '../cli/fixtures.js';

const ESC = '\u001b';

async function screen(bytes: string, size = { cols: 20, rows: 4 }): Promise<string[]> {
  const text = new ScreenText(size);
  const lines = await text.write(Buffer.from(bytes));
  return [...lines, ...text.end()];
}

describe('ScreenText', () => {
  it('renders a hostile transcript as the screen showed it: no escape sequence, trailing blanks trimmed', async () => {
    const lines = await renderTranscript('screen', Buffer.from(HOSTILE_LOG));
    expect(lines).toEqual(['wrapper: starting the agent', 'Agent TUI', '', '    Working on it']);
    expect(lines.join('\n')).not.toContain(ESC);
  });

  it('gives rows in order: history as it scrolls off, an alternate screen when left, then the screen', async () => {
    const text = new ScreenText({ cols: 20, rows: 3 });
    const write = (s: string) => text.write(Buffer.from(s));
    expect(await write('one\r\ntwo\r\n')).toEqual([]);
    expect(await write('three\r\nfour\r\n')).toEqual(['one', 'two']);
    expect(await write('\u001b[?1049h\u001b[Hfull screen\u001b[K')).toEqual(['three', 'four']);
    expect(await write('\u001b[?1049l')).toEqual(['full screen']);
    // The rows taken when the full-screen program started are not given again.
    expect(await write('five\r\nsix\r\nseven\r\n')).toEqual(['five']);
    expect(text.end()).toEqual(['six', 'seven']);
  });

  it('shows a row redrawn in place as last drawn, a long line as the rows it wrapped into', async () => {
    expect(await screen('50%\r75%\r100%\r\n')).toEqual(['100%']);
    expect(await screen(`${'a'.repeat(25)}\r\n`)).toEqual(['a'.repeat(20), 'aaaaa']);
  });

  it('keeps what a clear (ED 3) or a reset (RIS) erases, once', async () => {
    const rows = Array.from({ length: 6 }, (_, i) => `r${i}\r\n`).join('');
    expect(await screen(`${rows}\u001b[H\u001b[2J\u001b[3Jafter`)).toEqual([
      'r0',
      'r1',
      'r2',
      'after',
    ]);
    expect(await screen(`${rows}\u001b[?1049h\u001b[Halt\u001bcafter`)).toEqual([
      'r0',
      'r1',
      'r2',
      'r3',
      'r4',
      'r5',
      'alt',
      'after',
    ]);
  });

  it('gives the same text fed byte by byte as whole, with a long history', async () => {
    const log = Array.from({ length: 9000 }, (_, i) => `line ${i} ${'é'.repeat(i % 7)}\r\n`).join(
      '',
    );
    const whole = await screen(log, { cols: 200, rows: 50 });
    const text = new ScreenText({ cols: 200, rows: 50 });
    const bytes = Buffer.from(log);
    const pieces: string[] = [];
    for (let i = 0; i < bytes.length; i += 997) {
      pieces.push(...(await text.write(bytes.subarray(i, i + 997))));
    }
    pieces.push(...text.end());
    expect(pieces).toEqual(whole);
    expect(whole).toHaveLength(9000);
    expect(whole[8999]).toBe(`line 8999 ${'é'.repeat(8999 % 7)}`);
  });
});

describe('Conversation', () => {
  it('reads a real claude-print transcript as its conversation', () => {
    const conversation = new Conversation();
    const lines = [...conversation.write(PRINT_LOG), ...conversation.end()];
    expect(lines).toEqual(PRINT_TEXT);
  });

  it('gives the same text however the bytes are cut (a followed log)', () => {
    const conversation = new Conversation();
    const lines: string[] = [];
    for (let i = 0; i < PRINT_LOG.length; i += 7) {
      lines.push(...conversation.write(PRINT_LOG.subarray(i, i + 7)));
    }
    lines.push(...conversation.end());
    expect(lines).toEqual(PRINT_TEXT);
  });

  it('skips JSON of other kinds and cut lines, shows other text, and no control character', () => {
    const log = [
      '{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}}',
      '{"type":"assistant","message":{"content":[{"type":"text","text":"he',
      'Error: Input must be provided\u001b[0m',
      'null',
      '{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"bell \\u0007 and \\u001b[2J"}]}}',
      '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Mystery","input":{"a":1}}]}}',
      '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"1\\n2\\n3\\n4\\n5"}]}]}}',
      '{"type":"result","subtype":"error_during_execution","is_error":true,"terminal_reason":"api_error","api_error_status":429,"num_turns":1}',
    ].join('\r\n');
    const conversation = new Conversation();
    const lines = [...conversation.write(Buffer.from(log)), ...conversation.end()];
    expect(lines).toEqual([
      'Error: Input must be provided',
      'null',
      '● bell ^G and ^[[2J',
      '● Mystery({"a":1})',
      '  ⎿  Error: 1',
      '     2',
      '     3',
      '     … +2 lines',
      'Result: error_during_execution (api_error), error, HTTP 429, 1 turn',
    ]);
  });
});

describe('transcriptTail', () => {
  let t: TempDir;
  beforeEach(async () => {
    t = await makeTempDir('engine-transcript-');
  });
  afterEach(() => t.cleanup());

  async function session(agent: string | null, log: string | Buffer | null): Promise<string> {
    const dir = t.path(`sessions/2026_11_22_080000_FIX_r_${agent ?? 'none'}`);
    await mkdir(dir, { recursive: true });
    if (agent !== null) {
      const state = craftedState(t.dir, t.path('R.md'), dir, { status: 'exited', agent });
      await writeFile(join(dir, '.state.json'), JSON.stringify(state));
    }
    if (log !== null) await writeFile(join(dir, 'agent.log'), log);
    return dir;
  }

  it('is the last lines of the conversation for claude-print, of the screen otherwise', async () => {
    expect(await transcriptTail(await session('claude-print', PRINT_LOG), 2)).toEqual(
      PRINT_TEXT.slice(-2),
    );
    expect(await transcriptTail(await session('claude', HOSTILE_LOG), 3)).toEqual([
      'Agent TUI',
      '',
      '    Working on it',
    ]);
    // A record without the profile (or none) reads as a screen.
    expect(await transcriptTail(await session(null, 'plain\r\ntext\r\n'), 5)).toEqual([
      'plain',
      'text',
    ]);
  });

  it('transcriptLines reads the kind with the first piece: a followed session recorded after the follow began', async () => {
    const dir = t.path('sessions/2026_11_22_080000_FIX_r_later');
    await mkdir(dir, { recursive: true });
    async function* pieces(): AsyncGenerator<Uint8Array> {
      const state = craftedState(t.dir, t.path('R.md'), dir, { agent: 'claude-print' });
      await writeFile(join(dir, '.state.json'), JSON.stringify(state));
      yield PRINT_LOG.subarray(0, 5000);
      yield PRINT_LOG.subarray(5000);
    }
    const lines: string[] = [];
    for await (const settled of transcriptLines(dir, pieces())) lines.push(...settled);
    expect(lines).toEqual(PRINT_TEXT);
  });

  it('is empty before the agent wrote anything', async () => {
    expect(await transcriptTail(await session('claude', null), 5)).toEqual([]);
  });

  it('renders a long log from its last MiB, from a line start', async () => {
    const rows = Array.from({ length: 200_000 }, (_, i) => `row ${i}\r\n`).join('');
    const tail = await transcriptTail(await session('claude', rows), 3);
    expect(tail).toEqual(['row 199997', 'row 199998', 'row 199999']);
  });
});
