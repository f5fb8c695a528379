/**
 * parcel's watching thread can end (a signal interrupts its poll: parcel 2.6 throws on EINTR);
 * unsubscribing it then waits for that thread forever, which hung the daemon. The backend
 * leaves a subscription that reported an error open and silent, and unsubscribes any other.
 */
import { expect, it, vi } from 'vitest';
import { parcelBackendOver, type ParcelWatcher } from '../../src/watch/parcel-backend.js';
import { IGNORE_RULES } from '../../src/tags/walk-markdown.js';

/** A stand-in for parcel whose unsubscribe never ends, as with a thread that ended. */
function standIn() {
  let callback: Parameters<ParcelWatcher['subscribe']>[1] = () => undefined;
  const unsubscribe = vi.fn(() => new Promise<void>(() => undefined));
  const watcher: ParcelWatcher = {
    subscribe: async (_dir, cb) => {
      callback = cb;
      return { unsubscribe };
    },
  };
  return {
    watcher,
    unsubscribe,
    report: (...args: Parameters<typeof callback>) => callback(...args),
  };
}

function handlers() {
  return { onEvent: vi.fn(), onError: vi.fn(), onStale: vi.fn() };
}

it('leaves a subscription whose thread ended open and silent, and closes at once', async () => {
  const parcel = standIn();
  const seen = handlers();
  const watch = await parcelBackendOver(parcel.watcher).subscribe('/nowhere', IGNORE_RULES, seen);
  parcel.report(new Error('Unable to poll: Interrupted system call'), []);
  expect(seen.onError).toHaveBeenCalledTimes(1);
  expect(seen.onStale).toHaveBeenCalledTimes(1);
  parcel.report(null, [{ type: 'update', path: '/nowhere/a.md' }]);
  parcel.report(new Error('Unable to poll: Interrupted system call'), []);
  expect(seen.onEvent).not.toHaveBeenCalled();
  expect(seen.onError).toHaveBeenCalledTimes(1);
  await watch.close();
  expect(parcel.unsubscribe).not.toHaveBeenCalled();
});

it('unsubscribes a subscription that reported no error', async () => {
  const parcel = standIn();
  parcel.unsubscribe.mockImplementation(() => Promise.resolve());
  const seen = handlers();
  const watch = await parcelBackendOver(parcel.watcher).subscribe('/nowhere', IGNORE_RULES, seen);
  parcel.report(null, [{ type: 'update', path: '/nowhere/a.md' }]);
  expect(seen.onEvent).toHaveBeenCalledWith('change', '/nowhere/a.md');
  await watch.close();
  expect(parcel.unsubscribe).toHaveBeenCalledTimes(1);
});
