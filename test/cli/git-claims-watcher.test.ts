import { expect, it } from 'vitest';
import { watchesWithChokidar } from '../../src/cli/run-daemon.js';
import { engineJson } from '../../src/init/plan-init.js';

it('watches git claims with chokidar unless parcel is chosen by flag or environment', () => {
  const git = { claims: 'git', watcher: 'parcel' };
  expect(watchesWithChokidar(git, 'default')).toBe(true);
  // engine init writes every default into engine.json: its parcel is no choice (found by a walk).
  expect(JSON.parse(engineJson(false)).watcher).toBe('parcel');
  expect(watchesWithChokidar(git, 'engine.json')).toBe(true);
  expect(watchesWithChokidar(git, 'flag')).toBe(false);
  expect(watchesWithChokidar(git, 'env')).toBe(false);
  expect(watchesWithChokidar({ claims: 'local', watcher: 'parcel' }, 'default')).toBe(false);
});
