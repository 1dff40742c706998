/**
 * The board page on a board with a backlog (issue 31), in headless Chromium: a real daemon on a log
 * of 3,000 queued runs, each on a lane of its own. The page lists the runs served next and says how
 * many it leaves out; the summary counts them all; as a computer joins and drains them, the page
 * follows by deltas without a reload, and its connection stays up.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boardInput } from '../../actors/board/boardInputs.ts';
import { hashToken, newToken } from '../../adapters/http/tokens.ts';
import { type Daemon, startDaemon } from '../../apps/daemon/startDaemon.ts';
import { PAGE_ROWS } from '../../web/laneRows.ts';
import { seedBacklog } from '../fixtures/backlog.ts';
import { AGENT, startTestDaemon, type TestBoard } from './webSupport.ts';
import { hasChromium, newBrowserContext } from './workerChromium.ts';

const QUEUED = 3_000;

describe.skipIf(!hasChromium)('the board page on a board with a backlog', () => {
  let board: TestBoard;
  let computer: Daemon | undefined;
  let context: BrowserContext;
  let page: Page;
  let runIds: readonly string[];
  const errors: string[] = [];

  beforeAll(async () => {
    [board, context] = await Promise.all([
      startTestDaemon({ boardOnly: true, exec: '' }),
      newBrowserContext({ viewport: { width: 1280, height: 900 } }),
    ]);
    await board.daemon().close();
    ({ runIds } = await seedBacklog(board.db, QUEUED));
    await board.restart();
    page = await context.newPage();
    page.on('pageerror', (error) => errors.push(String(error)));
    page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
  });

  afterAll(async () => {
    await context?.close();
    await computer?.close();
    await board?.close();
  });

  it('lists the runs served next, counts them all, and follows the drain by deltas', async () => {
    const frames: number[] = [];
    page.on('websocket', (ws) => ws.on('framereceived', (frame) => frames.push(Buffer.byteLength(String(frame.payload)))));
    await page.goto(`${board.url}/`);
    await expect.poll(() => page.locator('#connection').getAttribute('data-state')).toBe('live');
    await expect.poll(() => page.locator('#summary').textContent()).toContain(`${QUEUED} queued`);
    expect(frames[0]).toBeLessThanOrEqual(256 * 1024);
    expect(await page.locator('#lanes tr[data-run]').count()).toBe(PAGE_ROWS.waiting);
    await expect(page.locator('#lanes-more').textContent()).resolves.toContain(`and ${QUEUED - PAGE_ROWS.waiting} more not listed`);
    await expect(page.locator(`#lanes tr[data-run="${runIds[0]}"]`).count()).resolves.toBe(1);
    await page.evaluate(() => ((window as unknown as { marker: string }).marker = 'not reloaded'));

    // A computer joins and drains the backlog, oldest first.
    const token = newToken();
    await board.daemon().board!.board.actor.input(boardInput.computerAdded('c2', hashToken(token), Date.now()));
    computer = await startDaemon({ db: board.db, server: board.url, computer: 'c2', token, exec: AGENT, slots: 4 });
    await expect.poll(() => page.locator(`#lanes tr[data-run="${runIds[0]}"]`).count(), { timeout: 15_000 }).toBe(0);
    const queued = async () => Number(/(\d+) queued/.exec((await page.locator('#summary').textContent()) ?? '')?.[1]);
    await expect.poll(queued, { timeout: 15_000 }).toBeLessThan(QUEUED - 4);
    expect(await page.locator('#lanes tr[data-run]').count()).toBeLessThanOrEqual(PAGE_ROWS.active + PAGE_ROWS.waiting);
    expect(await page.locator('#connection').getAttribute('data-state')).toBe('live');
    expect(await page.evaluate(() => (window as unknown as { marker?: string }).marker)).toBe('not reloaded');
    expect(errors).toEqual([]);
  });
});
