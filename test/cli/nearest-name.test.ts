import { describe, expect, it } from 'vitest';
import { editDistance, nearestName } from '../../src/cli/nearest-name.js';

describe('editDistance', () => {
  it.each([
    ['status', 'status', 0],
    ['stauts', 'status', 1],
    ['jsn', 'json', 1],
    ['retires', 'retries', 1],
    ['', 'abc', 3],
    ['kitten', 'sitting', 3],
  ])('%s to %s: %i', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
    expect(editDistance(b, a)).toBe(distance);
  });
});

describe('nearestName', () => {
  const commands = ['init', 'tag', 'run', 'status', 'board', 'retry'];
  it.each([
    ['stauts', 'status'],
    ['stat', 'status'],
    ['tga', 'tag'],
    ['RUN', 'run'],
    ['retyr', 'retry'],
    ['xyzzy', null],
    // A short word: one step at most, else every short name would be suggested.
    ['ab', null],
  ])('%s: %s', (word, near) => {
    expect(nearestName(word, commands)).toBe(near);
  });
});
