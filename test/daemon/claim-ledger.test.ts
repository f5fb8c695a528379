import { describe, expect, it } from 'vitest';
import { ClaimLedger } from '../../src/daemon/claim-ledger.js';

describe('ClaimLedger', () => {
  it('keeps an item queued until it is unqueued, per file and noun', () => {
    const ledger = new ClaimLedger();
    ledger.queue('/a.md', 'fix');
    expect(ledger.isQueued('/a.md', 'fix')).toBe(true);
    expect(ledger.isQueued('/a.md', 'chores')).toBe(false);
    ledger.unqueue('/a.md', 'fix');
    expect(ledger.isQueued('/a.md', 'fix')).toBe(false);
  });

  it('says on unwatch whether an approval was held while the claim was ending, once', () => {
    const ledger = new ClaimLedger();
    ledger.watch('/a.md', 'fix');
    ledger.watch('/b.md', 'fix');
    expect(ledger.watchedCount).toBe(2);
    ledger.hold('/a.md', 'fix');
    expect(ledger.unwatch('/a.md', 'fix')).toBe(true);
    expect(ledger.unwatch('/b.md', 'fix')).toBe(false);
    expect(ledger.watchedCount).toBe(0);
    ledger.watch('/a.md', 'fix');
    expect(ledger.unwatch('/a.md', 'fix')).toBe(false);
  });

  it('knows the claims a file carries as last read, and forgets ended ones', () => {
    const ledger = new ClaimLedger();
    ledger.setClaims('/a.md', ['fix', 'chores']);
    ledger.setClaims('/b.md', ['fix']);
    expect(ledger.knownClaims()).toEqual([
      { file: '/a.md', noun: 'fix' },
      { file: '/a.md', noun: 'chores' },
      { file: '/b.md', noun: 'fix' },
    ]);
    ledger.forgetClaim('/a.md', 'fix');
    ledger.setClaims('/b.md', []);
    expect(ledger.knownClaims()).toEqual([{ file: '/a.md', noun: 'chores' }]);
    expect(ledger.hasClaim('/a.md', 'fix')).toBe(false);
    expect(ledger.hasClaim('/a.md', 'chores')).toBe(true);
  });
});
