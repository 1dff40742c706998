/**
 * The live web view in headless Chromium (issue 7): a real daemon in this process, runs submitted
 * through the HTTP API, and a page that must show them without a reload, show a parked run's reason
 * and a countdown that moves, and lead to a run's timeline with every decision and its reason.
 *
 * A parked run is made certain, not hoped for: a second computer (`c2`) joins the board on the same
 * log. A run is offered to one computer at a time, so both turns of lane "talk" go to the computer
 * that claims the first; the second's offer left unanswered there moves it to the other computer,
 * which asks for it while the first still runs (its agent sleeps 6 s) and is told conversation_busy:
 * parked for 30 s, until the board withdraws it when the first computer claims it.
 */
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boardInput } from '../../actors/board/boardInputs.ts';
import { hashToken, newToken } from '../../adapters/http/tokens.ts';
import { type Daemon, startDaemon } from '../../apps/daemon/startDaemon.ts';
import { WAITS_FOR_EARLIER_TURN } from '../../events/queueReasons.ts';
import {
  claudeLikeAgent,
  holderOf,
  holdOpen,
  offerGoesUnanswered,
  runState,
  SCREENSHOTS,
  screenshot,
  startTestDaemon,
  submit,
  type TestBoard,
  waitFor,
} from './webSupport.ts';
import { hasChromium, newBrowserContext } from './workerChromium.ts';

if (!hasChromium)
  console.warn(
    'test/web: browser tests skipped: /usr/bin/chromium-headless-shell is missing (apt-get install chromium-headless-shell; .ci/run installs it)',
  );

describe.skipIf(!hasChromium)('the live web view in headless Chromium', () => {
  let board: TestBoard;
  let second: Daemon;
  let context: BrowserContext;
  let page: Page;
  const errors: string[] = [];

  beforeAll(async () => {
    const agent = claudeLikeAgent();
    [board, context] = await Promise.all([startTestDaemon({ exec: agent }), newBrowserContext({ viewport: { width: 1280, height: 900 } })]);
    // Registered through the running board's actor, as the daemon registers its own computer.
    const token = newToken();
    await board.daemon().board!.board.actor.input(boardInput.computerAdded('c2', hashToken(token), Date.now()));
    second = await startDaemon({ db: board.db, server: board.url, computer: 'c2', token, exec: agent, slots: 1 });
    await waitFor('both computers on the push stream', async () => {
      const status = (await (await fetch(`${board.url}/v1/status`)).json()) as { board: { connected: string[] } };
      return status.board.connected.length === 2;
    });
    page = await context.newPage();
    page.on('pageerror', (error) => errors.push(String(error)));
    // A reconnect attempt while the board restarts is refused, and Chromium says so: expected, not an error of the page.
    page.on(
      'console',
      (message) => message.type() === 'error' && !/WebSocket connection to .* failed/.test(message.text()) && errors.push(message.text()),
    );
  });

  afterAll(async () => {
    await context?.close();
    await second?.close();
    await board?.close();
  });

  it("shows submitted runs live, a parked run with its reason and a moving countdown, and each run's timeline", async () => {
    await page.goto(`${board.url}/`);
    await expect.poll(() => page.locator('#connection').getAttribute('data-state')).toBe('live');
    await expect.poll(() => page.locator('#computers tbody tr').count()).toBe(2);
    // The first Tab reaches the skip link, which takes the keyboard past the header to the board.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to the board');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
    // Set before any run exists: still set at the end proves nothing was reloaded.
    await page.evaluate(() => ((window as unknown as { marker: string }).marker = 'not reloaded'));

    const open = holdOpen();
    const first = await submit(board, 'talk', `the first turn, ${open.word}`);
    const second = await submit(board, 'talk', 'the second turn, sleep=200');
    // Held as well: the lanes list only the runs at work or waiting, and the page's status comes at most
    // every quarter second (less often on a loaded machine), so a turn of 200 ms can end unseen.
    const solo = holdOpen();
    const other = await submit(board, 'solo', `another conversation, ${solo.word}`);

    const row = (runId: string) => page.locator(`#lanes tr[data-run="${runId}"]`);
    await row(first).first().waitFor({ timeout: 10_000 });
    await row(other).first().waitFor({ timeout: 10_000 });
    solo.release();
    // A list shown in full says nothing of what it leaves out (not the word "null").
    expect(await page.locator('#lanes').textContent()).not.toContain('null');
    await expect.poll(() => page.locator('#lanes section[data-lane="talk"] caption').textContent()).toContain('talk');
    await offerGoesUnanswered(board, second, await holderOf(board, first));
    await screenshot(page, join(SCREENSHOTS, '1-board-runs-live.png'));

    // The second turn, parked on the computer that lost the first: reason and countdown.
    const parked = page.locator(`#lanes tr[data-run="${second}"][data-state="parked"]`).first();
    await parked.waitFor({ timeout: 10_000 });
    await expect(parked.textContent()).resolves.toContain(WAITS_FOR_EARLIER_TURN);
    const timer = parked.locator('[role="timer"]');
    const before = await timer.textContent();
    expect(before).toMatch(/^in \d+ s$/);
    const secondsLeft = (text: string | null) => Number(/in (\d+) s/.exec(text ?? '')?.[1]);
    expect(secondsLeft(before)).toBeGreaterThan(20);
    expect(secondsLeft(before)).toBeLessThanOrEqual(30);
    await expect.poll(async () => secondsLeft(await timer.textContent()), { timeout: 3_000 }).toBeLessThan(secondsLeft(before));
    await expect(page.locator('#summary').textContent()).resolves.toMatch(/[1-9]\d* parked/);
    await screenshot(page, join(SCREENSHOTS, '2-board-parked-countdown.png'));

    // The activity list follows the log as well.
    await expect.poll(() => page.locator('#activity li').filter({ hasText: 'run.parked' }).count()).toBeGreaterThan(0);

    // Its link opens its timeline (a keyboard-usable link, followed here by a click). The lanes are
    // redrawn live: a click that lands while its row is replaced follows nothing, so it is made again.
    const opened = async () => {
      await page.locator(`#lanes tr[data-run="${second}"] a.run-link`).first().click({ timeout: 2_000 });
      await page.waitForURL(`**/runs/${second}`, { timeout: 2_000 });
      return true;
    };
    await expect.poll(() => opened().catch(() => false), { timeout: 20_000 }).toBe(true);
    await expect.poll(() => page.locator('#connection').getAttribute('data-state')).toBe('live');
    const timeline = page.locator('#timeline table');
    await timeline.waitFor();
    await expect(page.locator('h1').textContent()).resolves.toContain(second);
    const steps = () => page.locator('#timeline tbody tr').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.step));
    expect(await steps()).toEqual(expect.arrayContaining(['board.run.submitted', 'board.run.queued', 'claim.answered', 'run.parked']));
    const parkedEntry = page.locator('#timeline tr[data-step="run.parked"]').first();
    await expect(parkedEntry.locator('td.why').textContent()).resolves.toContain(WAITS_FOR_EARLIER_TURN);
    await expect(parkedEntry.locator('th time').textContent()).resolves.toMatch(/^\d\d:\d\d:\d\d\.\d{3}$/);
    for (const reason of await page.locator('#timeline td.why').allTextContents()) expect(reason.trim()).not.toBe('');
    open.release();

    // Live on the run page too: the first turn ends and the computer that ran it, which queued the second
    // behind it, claims it once the board has the first's completion; it runs and finishes.
    await page.locator('#timeline tr[data-step="board.run.finished"]').waitFor({ timeout: 15_000 });
    expect(await steps()).toEqual(expect.arrayContaining(['board.run.claimed', 'run.process.began', 'board.run.finished']));
    await expect(page.locator('#timeline tr[data-step="board.run.finished"] td.why').textContent()).resolves.toMatch(/^completed: succeeded/);
    await expect(page.locator('#facts').textContent()).resolves.toContain('succeeded');
    expect(await runState(board, second)).toBe('succeeded');
    await screenshot(page, join(SCREENSHOTS, '3-run-timeline.png'));

    // Back on the board: the finished turns have left their lanes; the first's timeline is one click away in the history.
    await page.goBack();
    await waitFor('the first turn to finish', async () => (await runState(board, first)) === 'succeeded');
    await expect.poll(() => row(first).count()).toBe(0);
    // The agent announced its sessions: each lane's is listed, with the close state the log gives.
    await expect.poll(() => page.locator('#sessions tbody tr').filter({ hasText: 'talk' }).count()).toBeGreaterThan(0);
    await expect(page.locator('#sessions tbody tr').first().textContent()).resolves.toMatch(/open: no close recorded|closing|closed/);
    await screenshot(page, join(SCREENSHOTS, '4-board-after.png'));
    // A finished run is found in the history, not in "Recent decisions", whose newest 40 decisions move
    // on (the link once scrolled out of it). By keyboard this time: plain links, Tab and Enter.
    await page.getByRole('link', { name: 'History of finished runs' }).click();
    await page.waitForURL('**/history');
    await page.locator(`#history a[href="/runs/${first}"]`).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(`**/runs/${first}`);
    await page.locator('#timeline tr[data-step="board.run.finished"]').waitFor();
    expect(errors).toEqual([]);
  });

  it('reconnects a page after the board restarts, and shows the log as it is now', async () => {
    await page.goto(`${board.url}/`);
    await expect.poll(() => page.locator('#connection').getAttribute('data-state')).toBe('live');
    await page.evaluate(() => ((window as unknown as { marker: string }).marker = 'not reloaded'));
    const restarted = board.restart();
    await expect.poll(() => page.locator('#connection').getAttribute('data-state'), { timeout: 5_000 }).toBe('reconnecting');
    await restarted;
    await expect.poll(() => page.locator('#connection').getAttribute('data-state'), { timeout: 15_000 }).toBe('live');
    const late = await submit(board, 'late', 'submitted after the restart, sleep=200');
    await page.locator(`#activity a[href="/runs/${late}"]`).first().waitFor({ timeout: 10_000 });
    expect(await page.evaluate(() => (window as unknown as { marker?: string }).marker)).toBe('not reloaded');
    expect(errors).toEqual([]);
  });

  it("keeps the keyboard focus on a run's link while the lanes are redrawn around it", async () => {
    await page.goto(`${board.url}/`);
    await expect.poll(() => page.locator('#connection').getAttribute('data-state')).toBe('live');
    const open = holdOpen();
    await submit(board, 'focus', `an open turn, ${open.word}`);
    // Held too: a next turn that ended before the lanes were drawn anew would take its link with it.
    const next = holdOpen();
    const waiting = await submit(board, 'focus', `the next turn, ${next.word}`);
    const link = page.locator(`#lanes a[href="/runs/${waiting}"]`).first();
    await link.waitFor({ timeout: 10_000 });
    await link.focus();
    await page.evaluate(() =>
      document.querySelectorAll('#lanes tr').forEach((row) => {
        (row as HTMLElement).dataset.old = 'yes';
      }),
    );
    open.release();
    // The first turn ends and the next is claimed: the lanes are drawn anew, the focus stays.
    await expect.poll(() => page.locator('#lanes tr[data-old]').count(), { timeout: 10_000 }).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('href'))).toBe(`/runs/${waiting}`);
    next.release();
  });
});
