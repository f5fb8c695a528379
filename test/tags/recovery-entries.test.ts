import { expect, it } from 'vitest';
import { requeueEdit } from '../../src/tags/lifecycle-edits.js';
import { attemptsSoFar, failuresInARow, recoveryRecords } from '../../src/tags/recovery-entries.js';

const claimed = '# R\n**Tags**: #claimed-fix\n**Session**: sessions/s1\n\nBody.\n';
const entry = {
  date: '2026-11-24T10:00:00.000Z',
  reason: 'r',
  priorSession: 'sessions/s1/',
  attempt: 1,
};

it('writes and reads back which Recovery entries are attempts, and the last Not Before', () => {
  const legacy = requeueEdit(claimed, 'fix', 'sessions/s1', entry);
  expect(recoveryRecords(legacy)).toEqual([
    { failure: 'agent', notBefore: null, reason: 'r', to: '#needs-fix' },
  ]);
  const reclaim = (text: string, s: string) =>
    text
      .replace('**Tags**: #needs-fix', '**Tags**: #claimed-fix')
      .replace('**Tags**: #delegated-fix', '**Tags**: #claimed-fix')
      .replace('**Tags**: #claimed-fix\n', `**Tags**: #claimed-fix\n**Session**: ${s}\n`);
  let text = requeueEdit(reclaim(legacy, 'sessions/s2'), 'fix', 'sessions/s2', {
    ...entry,
    back: 'delegated',
    failure: 'usage-limit',
    notBefore: '2026-11-24T11:00:00.000Z',
  });
  expect(text).toContain('**Tags**: #delegated-fix\n');
  expect(text).toContain('*   **Failure**: usage-limit (not an attempt)\n');
  text = requeueEdit(reclaim(text, 'sessions/s3'), 'fix', 'sessions/s3', {
    ...entry,
    back: 'delegated',
    failure: 'launch',
    notBefore: '2026-11-24T12:00:00.000Z',
  });
  const records = recoveryRecords(text);
  expect(records.map((r) => r.failure)).toEqual(['agent', 'usage-limit', 'launch']);
  expect(attemptsSoFar(records)).toBe(1);
  expect(failuresInARow(records, 'launch')).toBe(1);
  expect(records.at(-1)?.notBefore).toEqual(new Date('2026-11-24T12:00:00.000Z'));
  // Where each entry sent the item: a human's `#needs-fix`, or a retry's `#delegated-fix`.
  expect(records.map((r) => r.to)).toEqual(['#needs-fix', '#delegated-fix', '#delegated-fix']);
  // An entry of an older version, its tags written bare.
  const older =
    '# R\n**Tags**: #needs-fix\n\n## Recovery\n*   **Reason**: it died; gave up after 3 attempts\n*   **Action**: Re-queued for processing (back to #needs-fix, approve again to retry)\n';
  expect(recoveryRecords(older)).toEqual([
    {
      failure: 'agent',
      notBefore: null,
      reason: 'it died; gave up after 3 attempts',
      to: '#needs-fix',
    },
  ]);
  // An entry shown inside a code fence is an example, not a record.
  expect(recoveryRecords('# R\n\n```\n## Recovery\n*   **Failure**: agent\n```\n')).toEqual([]);
});
