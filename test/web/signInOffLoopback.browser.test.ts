/**
 * A board off loopback (`runledger server --host 0.0.0.0`) asks a browser for its submit token before
 * it shows anything: the refusal page carries the sign-in form, which trades the token for the
 * HttpOnly cookie and loads the page asked for, live (its socket takes the same cookie).
 */
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOTS, screenshot, startTestDaemon, type TestBoard } from './webSupport.ts';
import { hasChromium, newBrowserContext } from './workerChromium.ts';

describe.skipIf(!hasChromium)('signing in to a board off loopback, in headless Chromium', () => {
  let board: TestBoard;
  let context: BrowserContext;

  beforeAll(async () => {
    [board, context] = await Promise.all([
      startTestDaemon({ host: '0.0.0.0', boardOnly: true, exec: '' }),
      newBrowserContext({ viewport: { width: 1280, height: 800 } }),
    ]);
  });
  afterAll(async () => {
    await context?.close();
    await board?.close();
  });

  it('shows the sign-in form where it refuses a reader without the token, then the page asked for', async () => {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(String(error)));
    const url = board.url.replace('0.0.0.0', '127.0.0.1');
    const answer = await page.goto(`${url}/lanes/talk`);
    expect(answer?.status()).toBe(401);
    await page.locator('#sign-in').waitFor({ timeout: 10_000 });
    await expect(page.locator('main').textContent()).resolves.toContain('sign in below with its submit token');
    await screenshot(page, join(SCREENSHOTS, 'signin-off-loopback.png'));
    await page.locator('#sign-in-token').fill(board.token);
    await page.locator('#sign-in button[type="submit"]').click();
    await page.locator('#lane-name').waitFor({ timeout: 10_000 });
    await expect.poll(() => page.locator('#connection').getAttribute('data-state'), { timeout: 10_000 }).toBe('live');
    await expect(page.locator('#lane-name').textContent()).resolves.toBe('talk');
    // Signed in already: the lane page offers its send box at once.
    await page.locator('#send-form').waitFor({ timeout: 10_000 });
    expect(errors).toEqual([]);
    await page.close();
  });
});
