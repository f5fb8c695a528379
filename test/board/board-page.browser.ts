/**
 * The board end to end in a real browser: Debian's chromium driven by playwright-core, against
 * `engine run --monitor-tags --board` with the test agent (held until released). Approve a
 * `#needs-X` card and see the file change and the card move; an agent waiting for input shows in
 * Needs you with its question; a change made in a file shows without a reload; a running agent's
 * transcript tail on its card, the report from the daemon; cancel and retry;
 * a 375 px window. Saves a screenshot: to $BOARD_SCREENSHOT when set (README's docs/board.png is
 * taken with BOARD_SCREENSHOT=docs/board.png npm run test:board), else into the test's own
 * temporary directory, so a run leaves the clone as it was.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DaemonHarness,
  read,
  release,
  waitForReady,
  waitForTag,
  type DaemonProcess,
} from '../helpers/daemon-harness.js';
import { waitFor } from '../helpers/wait-for.js';

const CHROMIUM = process.env.ENGINE_TEST_CHROMIUM ?? '/usr/bin/chromium';
const URL_LINE = /^Board: (http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]+)$/m;

let h: DaemonHarness;
let daemon: DaemonProcess;
let profile: string;
let context: BrowserContext;
let page: Page;
let url: string;

beforeAll(async () => {
  h = await DaemonHarness.open();
  await h.request('login.md', '# Fix the login redirect\n**Tags**: #needs-fix #P1\n');
  await h.request(
    'deploy.md',
    '# Deploy the fix\n**Tags**: #delegated-fix\n**Depends On**: sessions/login.md\n',
  );
  await h.request('readme.md', '# Refresh the README\n**Tags**: #delegated-chores\n');
  daemon = h.start(['--board', '--board-port', '0'], {
    TEST_AGENT_MODE: 'hold',
    TEST_AGENT_PRINT: 'the test agent at work',
  });
  await waitForReady(daemon);
  url = (await waitFor(() => URL_LINE.exec(daemon.output())?.[1]))!;
  profile = await mkdtemp(join(tmpdir(), 'engine-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 900 },
  });
  page = context.pages()[0] ?? (await context.newPage());
  await page.goto(url);
});

afterAll(async () => {
  await context?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
  await h?.close();
});

/** The card of `file` in `lane`. */
function card(lane: string, file: string): Locator {
  return page.locator(`[data-lane="${lane}"] [data-file="sessions/${file}"]`);
}

/** The session a request's Session line names, as a directory. */
async function sessionOf(file: string): Promise<string> {
  const ref = /^\*\*Session\*\*: (\S+)$/m.exec(await read(h.file(file)))?.[1];
  expect(ref).toBeDefined();
  return join(h.root, ref as string);
}

describe('the board in chromium', () => {
  it('takes the token from the fragment and clears it from the address bar', async () => {
    expect(page.url()).not.toContain('token');
    await expect.poll(() => page.locator('#connection').textContent()).toMatch(/^Live/);
    await card('needs-you', 'login.md').waitFor();
    await expect.poll(() => card('needs-you', 'login.md').textContent()).toContain('P1');
    // Local claims: no table of every host's claims (docs/BOARD.md).
    expect(await page.locator('#hosts').isHidden()).toBe(true);
  });

  it('reads nothing without the token, or with a wrong one', async () => {
    const other = await context.newPage();
    try {
      const origin = new URL(url).origin;
      await other.goto(`${origin}/`);
      await expect
        .poll(() => other.locator('#connection').textContent())
        .toMatch(/^No token: open the URL engine printed/);
      // Another document: a change of fragment alone does not load the page again.
      await other.goto('about:blank');
      await other.goto(`${origin}/#token=${'A'.repeat(43)}`);
      await expect
        .poll(() => other.locator('#connection').textContent())
        .toMatch(/token is missing or wrong/);
      expect(await other.locator('.card').count()).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('approves a #needs-X card: the file changes and the card moves to Running', async () => {
    const login = card('needs-you', 'login.md');
    await expect
      .poll(() => login.locator('code.command').first().textContent())
      .toBe('engine tag approve --to delegated sessions/login.md');
    await login.locator('button[data-action="approve"]').click();
    await expect.poll(() => page.locator('#answer').textContent()).toContain('#delegated-fix');
    await waitForTag(h.file('login.md'), ['#claimed-fix', '#P1']);
    await card('running', 'login.md').waitFor();
    expect(await card('needs-you', 'login.md').count()).toBe(0);
    await expect
      .poll(() => card('running', 'login.md').locator('.copy code').textContent())
      .toBe('engine attach sessions/login.md');
  });

  it("shows a running agent's transcript tail on its card, and the report from the daemon", async () => {
    await expect
      .poll(() => card('running', 'login.md').locator('.tail pre').textContent())
      .toContain('the test agent at work');
    await expect
      .poll(() => page.locator('#source').textContent())
      .toBe('This board: from the daemon');
  });

  it('shows an agent waiting for input in Needs you, with its question', async () => {
    const session = await sessionOf('login.md');
    // As the agent's hooks write it (agents/agent-state.ts).
    await writeFile(
      join(session, 'agent-state.json'),
      JSON.stringify({
        state: 'waiting',
        event: 'Notification',
        at: new Date().toISOString(),
        detail: 'Claude needs your permission to use Bash',
        notification: 'permission_prompt',
      }),
    );
    const waiting = card('needs-you', 'login.md');
    await waiting.waitFor();
    await expect.poll(() => waiting.textContent()).toContain('agent waiting for input');
    await expect.poll(() => waiting.textContent()).toContain('Claude needs your permission');
    expect(await card('running', 'login.md').count()).toBe(0);
  });

  it('shows a change made in a file without a reload', async () => {
    let reloaded = false;
    page.once('load', () => (reloaded = true));
    await h.request('docs.md', '# Write the docs\n**Tags**: #needs-chores\n');
    await card('needs-you', 'docs.md').waitFor({ timeout: 5000 });
    await writeFile(h.file('docs.md'), '# Write the user guide\n**Tags**: #needs-chores\n');
    await expect
      .poll(() => card('needs-you', 'docs.md').locator('h3').textContent(), { timeout: 5000 })
      .toBe('Write the user guide');
    // A title is text, never markup.
    const markup = 'Write the <img src=x onerror="document.title=1"> guide';
    await writeFile(h.file('docs.md'), `# ${markup}\n**Tags**: #needs-chores\n`);
    await expect
      .poll(() => card('needs-you', 'docs.md').locator('h3').textContent(), { timeout: 5000 })
      .toBe(markup);
    expect(await page.locator('.card img').count()).toBe(0);
    const changedAt = Date.now();
    await writeFile(h.file('docs.md'), '# Write the user guide\n**Tags**: #needs-chores\n');
    await page
      .locator('[data-lane="needs-you"] h3', { hasText: 'Write the user guide' })
      .waitFor({ timeout: 5000 });
    // Within a second of the change, with time to spare for a busy machine's test run.
    console.log(`board page updated ${Date.now() - changedAt} ms after the change`);
    expect(Date.now() - changedAt).toBeLessThan(1500);
    expect(reloaded).toBe(false);
  });

  it('cancels a running item, then retries it', async () => {
    const login = card('needs-you', 'login.md');
    await login.locator('button[data-action="cancel"]').click();
    await expect
      .poll(() => page.locator('#answer').textContent(), { timeout: 30_000 })
      .toMatch(/Cancelled: .*#needs-fix/);
    expect(await read(h.file('login.md'))).toContain('**Tags**: #needs-fix #P1');
    const given = card('needs-you', 'login.md');
    await expect.poll(() => given.textContent()).toContain('given up');
    await expect
      .poll(() => given.locator('code.command').first().textContent())
      .toBe('engine retry sessions/login.md --noun fix');
    await given.locator('button[data-action="retry"]').click();
    await expect.poll(() => page.locator('#answer').textContent()).toContain('Retried');
    await waitForTag(h.file('login.md'), ['#claimed-fix', '#P1']);
    await card('running', 'login.md').waitFor();
  });

  it('fits a 375 px window, and saves the screenshot', async () => {
    // A finished item for the Done lane.
    await release(await sessionOf('readme.md'));
    await card('done', 'readme.md').waitFor();
    await card('waiting', 'deploy.md').waitFor();
    await page.screenshot({
      path: process.env.BOARD_SCREENSHOT ?? join(h.root, 'board.png'),
      fullPage: true,
    });
    await page.setViewportSize({ width: 375, height: 800 });
    const width = await page.locator('html').evaluate((html) => html.scrollWidth);
    expect(width).toBeLessThanOrEqual(375);
    for (const lane of ['Needs you', 'Waiting', 'Running', 'Done'])
      expect(await page.getByRole('heading', { name: new RegExp(`^${lane} \\(`) }).count()).toBe(1);
    await card('running', 'login.md').waitFor();
    const rights = await page
      .locator('.card, button')
      .evaluateAll((nodes) => nodes.map((n) => n.getBoundingClientRect().right));
    expect(rights.length).toBeGreaterThan(0);
    expect(Math.max(...rights)).toBeLessThanOrEqual(375);
  });
});
