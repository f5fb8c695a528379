/** The text a done publishes (src/claims/done-text.ts): the agent's copy merged onto the branch's. */
import { expect, it } from 'vitest';
import { doneText } from '../../src/claims/done-text.js';

const swap = (text: string) =>
  text.includes('#claimed-fix') ? text.replace('#claimed-fix', '#done-fix') : null;
const CLAIMED = '# Item\n**Tags**: #claimed-fix\n\nBody.\n';

it('takes the Tags swap alone when the agent changed nothing else, or its base is unknown', async () => {
  const agent = `${CLAIMED.replace('#claimed-fix', '#done-fix')}`;
  expect(await doneText(swap, '#done-fix', CLAIMED, agent).edit(CLAIMED)).toBe(swap(CLAIMED));
  const answered = `${agent}\n## Response\nDone.\n`;
  expect(await doneText(swap, '#done-fix', undefined, answered).edit(CLAIMED)).toBe(swap(CLAIMED));
  expect(await doneText(swap, '#done-fix', CLAIMED, null).edit(CLAIMED)).toBe(swap(CLAIMED));
});

it('refuses a branch text that no longer shows the claim', async () => {
  const moved = CLAIMED.replace('#claimed-fix', '#needs-fix');
  expect(await doneText(swap, '#done-fix', CLAIMED, CLAIMED).edit(moved)).toBeNull();
});

it('merges a copy the checkout wrote with CRLF line ends without changing the branch’s', async () => {
  const agent = `${swap(CLAIMED)!}\n## Response\nDone.\n`.replace(/\n/g, '\r\n');
  const merged = await doneText(swap, '#done-fix', CLAIMED, agent).edit(CLAIMED);
  expect(merged).toBe(`${swap(CLAIMED)!}\n## Response\nDone.\n`);
});

it("keeps both a human's line appended on the branch and the agent's Response appended to its copy", async () => {
  const agent = `${swap(CLAIMED)!}\n## Response\nDone.\n`;
  const text = doneText(swap, '#done-fix', CLAIMED, agent);
  const tip = `${CLAIMED}\nAlso check the logout page.`;
  expect(await text.edit(tip)).toBe(
    `${swap(CLAIMED)!}\nAlso check the logout page.\n\n## Response\nDone.\n`,
  );
  expect(text.clashed()).toBe(false);
  // A change inside the text both made is still a clash: the done alone.
  const edited = doneText(swap, '#done-fix', CLAIMED, agent.replace('Body.', 'Body, fixed.'));
  expect(await edited.edit(CLAIMED.replace('Body.', 'Body, human.'))).toBe(
    swap(CLAIMED.replace('Body.', 'Body, human.')),
  );
  expect(edited.clashed()).toBe(true);
});

it('publishes only the done when the agent put the claim back, and says it clashed', async () => {
  const text = doneText(swap, '#done-fix', CLAIMED, `${CLAIMED}More.\n`);
  expect(await text.edit(CLAIMED)).toBe(swap(CLAIMED));
  expect(text.clashed()).toBe(true);
});

it('publishes only the done when the merge would lose it, and keeps saying it clashed', async () => {
  const untagged = `${CLAIMED.replace('#claimed-fix', '#P1')}\n## Response\nDone.\n`;
  const text = doneText(swap, '#done-fix', CLAIMED, untagged);
  expect(await text.edit(CLAIMED)).toBe(swap(CLAIMED));
  expect(text.clashed()).toBe(true);
  // A later try finds its done landed already: the clash is still said.
  expect(await text.edit(swap(CLAIMED)!)).toBeNull();
  expect(text.clashed()).toBe(true);
});
