import { expect, it } from 'vitest';
import { watchesWithChokidar } from '../../src/cli/run-daemon.js';
import { engineJson } from '../../src/init/plan-init.js';

it('watches git claims with chokidar unless a backend is chosen by flag or environment', () => {
  const git = { claims: 'git', watcher: 'node' };
  expect(watchesWithChokidar(git, 'default')).toBe(true);
  // engine init writes every default into engine.json: its node is no choice (found by a walk),
  // nor the parcel earlier engines wrote there.
  expect(JSON.parse(engineJson(false)).watcher).toBe('node');
  expect(watchesWithChokidar(git, 'engine.json')).toBe(true);
  expect(watchesWithChokidar({ ...git, watcher: 'parcel' }, 'engine.json')).toBe(true);
  expect(watchesWithChokidar(git, 'flag')).toBe(false);
  expect(watchesWithChokidar({ ...git, watcher: 'parcel' }, 'env')).toBe(false);
  expect(watchesWithChokidar({ claims: 'local', watcher: 'node' }, 'default')).toBe(false);
});
