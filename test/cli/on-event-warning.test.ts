/**
 * `--on-event` runs its command without a shell: a template that holds shell syntax is warned
 * about when the daemon starts, as the command would take it as plain arguments.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { shellSyntaxIn } from '../../src/notify/notify-event.js';
import { engine, makeTempDir, type TempDir } from './fixtures.js';

describe('shellSyntaxIn', () => {
  it.each([
    ['echo {event} >> f', ['>>']],
    ['notify {event} > /tmp/x', ['>']],
    ['a {event} | tee log', ['|']],
    ['a {event}; b', [';']],
    ['a && b {event}', ['&&']],
    ['notify "$(date)" {event}', ['$(']],
    ['notify `date` {event}', ['`']],
    ['notify-send engine {event}', []],
    // Quoted, it is text the command gets as meant.
    ["notify-send 'a > b; c | d && e' {event}", []],
    ['notify-send "a > b" {event}', []],
    ["notify-send '$(not run)'", []],
    ['notify-send a\\>b', []],
    // The way the warning shows: a shell named, the syntax its script.
    [`sh -c 'echo "$1" >> events.log' sh {event}`, []],
  ])('%s: %j', (template, syntax) => {
    expect(shellSyntaxIn(template)).toEqual(syntax);
  });
});

describe('engine run --on-event', () => {
  let t: TempDir;

  beforeEach(async () => {
    t = await makeTempDir('engine-on-event-');
    expect((await engine(t.dir, ['init'])).code).toBe(0);
  });

  afterEach(async () => {
    await t.cleanup();
  });

  it('warns at start about shell syntax, naming it and the way to run a shell', async () => {
    const result = await engine(t.dir, [
      'run',
      '--monitor-tags',
      '--dry-run',
      '--on-event',
      'echo {event} >> events.log',
    ]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /WARN {2}--on-event: the command runs without a shell, so its >> reach it as plain arguments; to use a shell, run one: sh -c 'echo "\$1" >> events.log' sh \{event\}\n$/,
    );
  });

  it('says nothing of a template without shell syntax; warns of one from the environment too', async () => {
    const plain = await engine(t.dir, ['run', '--monitor-tags', '--dry-run'], {
      ENGINE_ON_EVENT: 'notify-send engine {event}',
    });
    expect(plain.stderr).toBe('');
    const piped = await engine(t.dir, ['run', '--monitor-tags', '--dry-run'], {
      ENGINE_ON_EVENT: 'logger -t engine {event} | cat',
    });
    expect(piped.stderr).toMatch(/--on-event: .* its \| reach it/);
  });
});
