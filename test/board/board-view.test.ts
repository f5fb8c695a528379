/** The board's lanes and cards from a status report (board-view.ts, pure). */
import { describe, expect, it } from 'vitest';
import { boardView, shellWord, type ViewInputs } from '../../src/board/board-view.js';
import type { ClaimItem, StatusReport } from '../../src/status/collect-status.js';

const NOW = new Date('2026-11-26T09:00:00.000Z');
const ROOT = '/p';

function claim(file: string, over: Partial<ClaimItem> = {}): ClaimItem {
  return {
    file,
    noun: 'fix',
    session: 'sessions/2026_11_26_085000_FIX_a_0001',
    status: 'running',
    attempt: 2,
    pid: 42,
    alive: true,
    liveness: 'alive',
    pane: null,
    startedAt: '2026-11-26T08:50:00.000Z',
    ageSeconds: 600,
    lastHeartbeat: null,
    agentSessionId: null,
    agentState: null,
    ...over,
  };
}

function report(over: Partial<StatusReport>): StatusReport {
  return {
    root: ROOT,
    paths: [`${ROOT}/sessions`],
    daemon: { state: 'running', pid: 7, host: 'h', since: null, stalePid: null },
    paused: null,
    needsYou: [],
    waiting: [],
    next: [],
    running: [],
    stale: [],
    done: [],
    doneMore: 0,
    ...over,
  };
}

function inputs(r: StatusReport, readOnly = false): ViewInputs {
  return {
    report: r,
    from: 'files',
    now: NOW,
    readOnly,
    idOf: ({ file, noun }) => `${file}|${noun}`,
    factsOf: () => ({
      title: 'T',
      priority: 1,
      dependencies: ['sessions/b.md'],
    }),
    tailOf: (session) => `tail of ${session}`,
  };
}

describe('boardView', () => {
  it('puts an agent waiting for input in Needs you only, with its question and the cancel', () => {
    const waiting = claim(`${ROOT}/sessions/a.md`);
    const board = boardView(
      inputs(
        report({
          running: [waiting, claim(`${ROOT}/sessions/b c.md`)],
          needsYou: [
            {
              kind: 'input',
              file: waiting.file,
              noun: 'fix',
              session: waiting.session,
              since: '2026-11-26T08:59:00.000Z',
              question: 'Allow Bash?',
            },
          ],
        }),
      ),
    );
    expect(board.lanes.map((l) => l.title)).toEqual(['Needs you', 'Waiting', 'Running', 'Done']);
    const [need] = board.lanes[0]?.cards ?? [];
    expect(need).toMatchObject({
      file: 'sessions/a.md',
      state: 'agent waiting for input',
      why: 'Allow Bash?',
      priority: 'P1',
      dependencies: ['sessions/b.md'],
      tail: `tail of ${waiting.session}`,
      attach: 'engine attach sessions/a.md',
      actions: [{ name: 'cancel', command: 'engine cancel sessions/a.md --noun fix' }],
    });
    const running = board.lanes[2]?.cards ?? [];
    expect(running.map((c) => c.file)).toEqual(['sessions/b c.md']);
    expect(running[0]?.details).toContain('attempt 2');
    expect(running[0]?.details).toContain('running for 10 min');
    expect(running[0]?.attach).toBe("engine attach 'sessions/b c.md'");
  });

  it('offers approve and pick with the commands they equal, none when read-only', () => {
    const approval = {
      kind: 'approval' as const,
      file: `${ROOT}/sessions/n.md`,
      tag: '#needs-fix',
      noun: 'fix',
      title: 'N',
      line: 9,
      place: 'prose' as const,
      lineText: 'Fix it #needs-fix',
    };
    const named: unknown[] = [];
    const view = inputs(report({ needsYou: [approval] }));
    const board = boardView({ ...view, idOf: (item) => (named.push(item.approval), 'id') });
    // The card names its line by the text read with its number (the report's), which the approve
    // checks inside its compare-and-swap.
    expect(named).toEqual([{ tag: '#needs-fix', line: 9, lineText: 'Fix it #needs-fix' }]);
    expect(board.lanes[0]?.cards[0]?.actions.map((a) => a.command)).toEqual([
      'engine tag approve --to delegated sessions/n.md --inline 9',
      'engine tag approve --to next sessions/n.md --inline 9',
    ]);
    const shown = boardView(inputs(report({ needsYou: [approval] }), true));
    expect(shown.lanes[0]?.cards[0]?.actions).toEqual([]);
    expect(shown.resume).toBeNull();
  });

  it('says why an item waits, in the words of engine status', () => {
    const board = boardView(
      inputs(
        report({
          waiting: [
            {
              file: `${ROOT}/sessions/w.md`,
              noun: 'fix',
              skill: '/fix',
              weight: 2,
              tablePriority: 3,
              aged: false,
              wait: { kind: 'agents', max: 1, running: 1 },
            },
          ],
        }),
      ),
    );
    expect(board.lanes[1]?.cards[0]?.why).toBe('all agents busy: 1 of --max-agents 1 running');
  });

  it('quotes a file name for the shell', () => {
    expect(shellWord('sessions/a.md')).toBe('sessions/a.md');
    expect(shellWord("it's here.md")).toBe(`'it'\\''s here.md'`);
  });
});
