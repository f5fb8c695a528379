/**
 * Where a status reads the queue with git claims (daemon/queue-place.ts): the running daemon's
 * checkout; with none running and the settings saying git claims, the checkout the last one
 * left, said as such; never the record of a daemon gone when the settings say local claims.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { queuePlaceOf, recordQueuePlace } from '../../src/daemon/queue-place.js';
import { queueSourceOf, queueText } from '../../src/status/queue-source.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function recorded() {
  const dir = await mkdtemp(join(tmpdir(), 'engine-queue-place-'));
  dirs.push(dir);
  const root = join(dir, 'root');
  const checkout = join(dir, 'checkout');
  await mkdir(join(root, 'sessions'), { recursive: true });
  await mkdir(join(checkout, 'sessions'), { recursive: true });
  // Written by this process, which holds no daemon lock of the root: no daemon runs there.
  await recordQueuePlace(root, { checkout, root: checkout, remote: 'origin', branch: 'main' });
  return { root, checkout };
}

it('reads the checkout the last daemon left when none runs and the settings say git claims', async () => {
  const { root, checkout } = await recorded();
  expect(await queuePlaceOf(root, false)).toBeNull();
  const place = await queuePlaceOf(root, true);
  expect(place).toEqual({
    checkout,
    root: checkout,
    remote: 'origin',
    branch: 'main',
    stopped: true,
  });
  const source = await queueSourceOf(root, [join(checkout, 'sessions')], 'origin');
  expect(source).toMatchObject({ kind: 'checkout', stopped: true });
  expect(queueText(source!)).toMatch(/last ran on this root left it .* no daemon runs here now/);
});

it('reads the working tree when that checkout is gone', async () => {
  const { root, checkout } = await recorded();
  await rm(checkout, { recursive: true });
  expect(await queuePlaceOf(root, true)).toBeNull();
  expect(await queueSourceOf(root, [join(root, 'sessions')], 'origin')).toEqual({
    kind: 'working-tree',
    remote: 'origin',
  });
});
