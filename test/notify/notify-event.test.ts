import { describe, expect, it } from 'vitest';
import {
  describeEvent,
  notifies,
  notifyArgv,
  NOTIFY_EVENTS,
  parseNotifyVia,
  splitNotifyTemplate,
  tmuxLiteral,
} from '../../src/notify/notify-event.js';

const HOSTILE = `/r/sessions/$(touch pwned) ;rm -rf x 'q".md`;

describe('notification decisions', () => {
  it('notifies of the six events a human wants to hear of, and of no other', () => {
    expect(NOTIFY_EVENTS).toEqual([
      'done',
      'requeued',
      'gave-up',
      'waiting-for-input',
      'limit-paused',
      'limit-lifted',
    ]);
    expect(notifies({ event: 'gave-up' })).toBe(true);
    expect(notifies({ event: 'claimed' })).toBe(false);
    expect(notifies({ event: 'spawned' })).toBe(false);
  });

  it('fills each placeholder inside its own argument, a hostile name staying one literal argument', () => {
    const words = splitNotifyTemplate(`notify --what={event} {file} "{noun}: {reason}" {until}`);
    expect(
      notifyArgv(words, {
        event: 'requeued',
        file: HOSTILE,
        noun: 'fix',
        reason: 'agent died; $(reboot)',
      }),
    ).toEqual(['notify', '--what=requeued', HOSTILE, 'fix: agent died; $(reboot)', '']);
    expect(
      notifyArgv(splitNotifyTemplate('n {until} {session} {time}'), {
        event: 'limit-paused',
        until: '2026-01-01T00:00:00.000Z',
        session: 'sessions/s1',
        time: 't',
      }),
    ).toEqual(['n', '2026-01-01T00:00:00.000Z', 'sessions/s1', 't']);
  });

  it('refuses a template with an unknown placeholder or an open quote', () => {
    expect(() => splitNotifyTemplate('n {skill}')).toThrow(
      /^Notification command template has an unknown placeholder \{skill\}; known: \{event\} \{file\}/,
    );
    expect(() => splitNotifyTemplate("n 'x")).toThrow(/unclosed ' quote/);
  });

  it('reads --notify-via as a comma list of desktop and tmux, or none', () => {
    expect(parseNotifyVia('desktop,tmux')).toEqual(['desktop', 'tmux']);
    expect(parseNotifyVia(' tmux ')).toEqual(['tmux']);
    expect(parseNotifyVia('none')).toEqual([]);
    expect(() => parseNotifyVia('email')).toThrow(/unknown notification channel 'email'/);
    expect(() => parseNotifyVia('tmux,none')).toThrow(/unknown notification channel 'none'/);
  });

  it('describes an event in one line, and doubles # for tmux so no format or #() runs', () => {
    expect(
      describeEvent(
        { event: 'requeued', file: '/r/sessions/a.md', noun: 'fix', reason: 'agent died' },
        '/r',
      ),
    ).toBe('engine: requeued sessions/a.md #fix (agent died)');
    expect(describeEvent({ event: 'limit-paused', until: 'T', reason: 'usage limit' }, '/r')).toBe(
      'engine: limit-paused (usage limit) until T',
    );
    expect(tmuxLiteral('#(touch x) #{pane_id} ##')).toBe('##(touch x) ##{pane_id} ####');
  });
});
