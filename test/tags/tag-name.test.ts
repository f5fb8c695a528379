import { describe, expect, it } from 'vitest';
import { EngineError } from '../../src/errors.js';
import {
  EFFORT_TAGS,
  isTag,
  LIFECYCLE_STATES,
  LIFECYCLE_TRANSITIONS,
  lifecycleOf,
  lifecycleTag,
  parseTag,
  parseTagList,
  parseTagPattern,
  PRIORITY_TAGS,
  transitionTags,
} from '../../src/tags/tag-name.js';

describe('isTag', () => {
  it.each(['#needs-fix', '#P0', '#2fa-review', '#a', '#1', '#needs-x-', '#A-B-c'])(
    'should accept %s',
    (tag) => {
      expect(isTag(tag)).toBe(true);
    },
  );

  it.each(['', '#', 'needs-fix', '#-x', '#needs fix', '#x;rm', '#needs_fix', '#é', '##a', '#a#b'])(
    'should refuse %j',
    (tag) => {
      expect(isTag(tag)).toBe(false);
    },
  );

  it('should accept every weight tag', () => {
    for (const tag of [...PRIORITY_TAGS, ...EFFORT_TAGS]) expect(isTag(tag)).toBe(true);
  });
});

describe('parseTag', () => {
  it('should return a valid tag unchanged', () => {
    expect(parseTag('#needs-implementation')).toBe('#needs-implementation');
  });

  it.each(['#needs fix', '#x;rm', '', 'needs-fix'])(
    'should refuse %j with an EngineError that names it',
    (input) => {
      expect(() => parseTag(input)).toThrow(EngineError);
      expect(() => parseTag(input)).toThrow(`Invalid tag '${input}'`);
    },
  );
});

describe('parseTagList', () => {
  it('should split a comma list, trim it and drop duplicates', () => {
    expect(parseTagList('#a, #b,#a')).toEqual(['#a', '#b']);
  });

  it('should refuse a list with an invalid entry', () => {
    expect(() => parseTagList('#a,b')).toThrow(EngineError);
    expect(() => parseTagList('#a,')).toThrow(EngineError);
  });
});

describe('lifecycleOf', () => {
  it('should read the state and the noun of every lifecycle state', () => {
    for (const state of LIFECYCLE_STATES) {
      expect(lifecycleOf(`#${state}-fix`)).toEqual({ state, noun: 'fix' });
    }
  });

  it('should keep hyphens and digits in the noun', () => {
    expect(lifecycleOf('#done-code-review-2')).toEqual({ state: 'done', noun: 'code-review-2' });
  });

  it.each(['#needs', '#needs-', '#needsfix', '#needs-Fix', '#NEEDS-fix', '#wanted-fix', '#P1'])(
    'should not read %s as a lifecycle tag',
    (tag) => {
      expect(lifecycleOf(tag)).toBeNull();
    },
  );

  it('should round-trip with lifecycleTag', () => {
    expect(lifecycleTag('delegated', 'fix')).toBe('#delegated-fix');
    expect(lifecycleOf(lifecycleTag('claimed', 'implementation'))).toEqual({
      state: 'claimed',
      noun: 'implementation',
    });
  });
});

describe('parseTagPattern', () => {
  it('should match a plain tag exactly and whole', () => {
    const pattern = parseTagPattern('#needs-fix');
    expect(pattern.matches('#needs-fix')).toBe(true);
    expect(pattern.matches('#needs-fixes')).toBe(false);
    expect(pattern.matches('#needs-fi')).toBe(false);
    expect(pattern.prefilter).toBe('needs-fix');
  });

  it('should match a glob over lowercase names', () => {
    const pattern = parseTagPattern('#delegated-*');
    expect(pattern.matches('#delegated-fix')).toBe(true);
    expect(pattern.matches('#delegated-')).toBe(true);
    expect(pattern.matches('#delegated-code-review')).toBe(true);
    expect(pattern.matches('#needs-fix')).toBe(false);
    expect(pattern.matches('#xdelegated-fix')).toBe(false);
    expect(pattern.prefilter).toBe('delegated-');
  });

  it('should use the longest literal as the prefilter', () => {
    expect(parseTagPattern('#*-implementation').prefilter).toBe('-implementation');
  });

  it.each(['needs-*', '#', '#needs fix', '#.*', '#a|b'])('should refuse %j', (input) => {
    expect(() => parseTagPattern(input)).toThrow(EngineError);
  });
});

describe('the lifecycle table', () => {
  it('names each transition once, with states from the one list', () => {
    for (const { from, to } of Object.values(LIFECYCLE_TRANSITIONS)) {
      expect(LIFECYCLE_STATES).toContain(from);
      expect(LIFECYCLE_STATES).toContain(to);
    }
    expect(transitionTags('claim', 'fix')).toEqual({ from: '#delegated-fix', to: '#claimed-fix' });
    expect(transitionTags('requeue', 'fix')).toEqual({ from: '#claimed-fix', to: '#needs-fix' });
    expect(transitionTags('approve', 'a-b')).toEqual({ from: '#needs-a-b', to: '#delegated-a-b' });
    expect(transitionTags('pick', 'x')).toEqual({ from: '#needs-x', to: '#next-x' });
    expect(transitionTags('finish', 'x')).toEqual({ from: '#claimed-x', to: '#done-x' });
  });
});
