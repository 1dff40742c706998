/**
 * What a turn changed, on its run's page, in headless Chromium: a real daemon in this process works in
 * a lane's worktree of a real repository (the git agent writes, commits, and leaves a change
 * uncommitted); the page shows the summary (files changed, insertions, deletions, commits, what is left
 * uncommitted, from which commit to which) and the diff, live; its lane page says it in a line per turn.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRepositories } from '../../adapters/git/repositories.ts';
import { GIT_AGENT, git, makeRepo } from '../workspace/support.ts';
import { runState, SCREENSHOTS, screenshot, startTestDaemon, submit, type TestBoard, takesScreenshots, waitFor } from './webSupport.ts';
import { hasChromium, newBrowserContext } from './workerChromium.ts';

/** Where the lead reads the screenshots of a branch's work. */
const BRIEF_SCREENS = '/work/brief/screens';

describe.skipIf(!hasChromium)('a run’s changes on its page', () => {
  let board: TestBoard;
  let context: BrowserContext;
  let page: Page;
  let repo: string;
  const dir = mkdtempSync(join(tmpdir(), 'runledger-web-repo-'));
  const errors: string[] = [];

  beforeAll(async () => {
    repo = makeRepo(dir);
    // The agent commits in its worktree as the repository's own identity.
    git(repo, 'config', 'user.name', 'Test Agent');
    git(repo, 'config', 'user.email', 'agent@example.invalid');
    const repos = await checkRepositories([{ name: 'app', path: repo }]);
    [board, context] = await Promise.all([
      startTestDaemon({ exec: GIT_AGENT, repos }),
      newBrowserContext({ viewport: { width: 1280, height: 900 } }),
    ]);
    page = await context.newPage();
    page.on('pageerror', (error) => errors.push(String(error)));
  });

  afterAll(async () => {
    await context?.close();
    await board?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the files changed, insertions, deletions, commits and the diff of a turn in a worktree', async () => {
    const base = git(repo, 'rev-parse', 'main');
    const runId = await submit(
      board,
      'alice',
      ['write src/answer.ts export const answer = 42;', 'write NOTES.md first notes', 'commit Add the answer', 'write NOTES.md second thoughts'].join(
        '\n',
      ),
    );
    await page.goto(`${board.url}/runs/${runId}`);
    await expect.poll(() => page.locator('#connection').getAttribute('data-state')).toBe('live');
    await waitFor('the run to succeed', async () => (await runState(board, runId)) === 'succeeded');
    const summary = page.locator('#changes-summary');
    await expect.poll(() => summary.textContent(), { timeout: 10_000 }).toBe('1 commit, 2 files changed (+2 −0), 1 left uncommitted.');
    expect(await page.locator('#changes-files').textContent()).toBe('2');
    expect(await page.locator('#changes-insertions').textContent()).toBe('+2');
    expect(await page.locator('#changes-deletions').textContent()).toBe('−0');
    const head = git(repo, 'rev-parse', 'runledger/alice');
    expect(await page.locator('#changes-commits li').allTextContents()).toEqual([`${head.slice(0, 12)} Add the answer`]);
    expect(await page.locator('#changes-uncommitted').textContent()).toBe('1 file');
    expect(await page.locator('#changes-base').textContent()).toBe(`${base.slice(0, 12)} to ${head.slice(0, 12)}`);
    await page.locator('#changes-section details summary').click();
    const diff = await page.locator('#diff').textContent();
    expect(diff).toContain('+export const answer = 42;');
    expect(diff).toContain('+second thoughts');
    await page.locator('#changes-section').scrollIntoViewIfNeeded();
    const shot = join(SCREENSHOTS, 'run-changes.png');
    await screenshot(page, shot);
    if (takesScreenshots) {
      mkdirSync(BRIEF_SCREENS, { recursive: true });
      copyFileSync(shot, join(BRIEF_SCREENS, 'run-changes.png'));
    }

    // A turn that changed nothing says so.
    const idle = await submit(board, 'bob', 'just look');
    await page.goto(`${board.url}/runs/${idle}`);
    await waitFor('the idle run to succeed', async () => (await runState(board, idle)) === 'succeeded');
    await expect.poll(() => page.locator('#changes-summary').textContent(), { timeout: 10_000 }).toBe('It changed nothing.');

    // The lane page says what each turn changed, beside what it cost.
    await page.goto(`${board.url}/lanes/alice`);
    const fact = page.locator(`li.turn[data-run="${runId}"] [data-fact="changes"]`);
    await expect.poll(() => fact.textContent(), { timeout: 10_000 }).toBe('changed 1 commit, 2 files (+2 −0), 1 uncommitted');
    await screenshot(page, join(SCREENSHOTS, 'lane-changes.png'));
    expect(errors).toEqual([]);
  });
});
