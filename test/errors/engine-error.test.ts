/**
 * EngineError is one class for every copy of src/errors.ts: the CLI's CommonJS entry bundles a
 * copy (scripts/bundle-lean.mjs) and the ES modules it loads throw their own, and the CLI must
 * print either as an error the user can act on.
 */
import { describe, expect, it, vi } from 'vitest';
import { EngineError, PreconditionError } from '../../src/errors.js';

describe('EngineError', () => {
  it('is an EngineError whichever copy of the module made it; a subclass is checked as usual', async () => {
    // A second instance of the same module, as the bundle holds.
    vi.resetModules();
    const copy = await import('../../src/errors.js');
    expect(copy.EngineError).not.toBe(EngineError);
    const theirs = new copy.EngineError('from the other copy', { exitCode: 3 });
    expect(theirs instanceof EngineError).toBe(true);
    expect(new EngineError('ours') instanceof copy.EngineError).toBe(true);
    expect(new copy.PreconditionError('theirs') instanceof EngineError).toBe(true);
    expect(new PreconditionError('ours') instanceof PreconditionError).toBe(true);
    expect(new EngineError('plain') instanceof PreconditionError).toBe(false);
    for (const other of [new Error('x'), null, 'text', { exitCode: 1 }])
      expect(other instanceof EngineError).toBe(false);
  });
});
