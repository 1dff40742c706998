/**
 * Usage and live progress in the web view, in headless Chromium: a real daemon in this process runs
 * the Claude Code stand-in; a run's page shows what its agent is doing as the heartbeats carry it
 * (over the live socket, no reload), then what its turn cost; the board page shows the last day's
 * usage per login and per lane.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runState, SCREENSHOTS, screenshot, startTestDaemon, submit, type TestBoard, waitFor } from './webSupport.ts';
import { hasChromium, newBrowserContext } from './workerChromium.ts';

const STAND_IN = fileURLToPath(new URL('../fixtures/agents/claude-cli.sh', import.meta.url));

/** The stand-in as a program named `claude`: the daemon runs it headless, as it would Claude Code. */
function claudeStandIn(): string {
  const bin = join(SCREENSHOTS, 'bin-usage');
  mkdirSync(bin, { recursive: true });
  const path = join(bin, 'claude');
  writeFileSync(path, `#!/bin/sh\nexec /bin/sh "${STAND_IN}" "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

describe.skipIf(!hasChromium)('usage and progress in the web view', () => {
  let board: TestBoard;
  let context: BrowserContext;
  let page: Page;
  const errors: string[] = [];

  beforeAll(async () => {
    [board, context] = await Promise.all([startTestDaemon({ exec: claudeStandIn() }), newBrowserContext({ viewport: { width: 1280, height: 900 } })]);
    page = await context.newPage();
    page.on('pageerror', (error) => errors.push(String(error)));
  });

  afterAll(async () => {
    await context?.close();
    await board?.close();
  });

  it("a run's page shows what its agent is doing, live, then what its turn cost; the board page the day's usage", async () => {
    const runId = await submit(board, 'talk', 'work in STEPS=2');
    // The stand-in waits in its workspace for gate-<k> after step k.
    const gate = (k: number) => writeFileSync(join(dirname(board.db), 'workspaces', 'local', 'talk', `gate-${k}`), '');
    await page.goto(`${board.url}/runs/${runId}`);
    await expect.poll(() => page.locator('#connection').getAttribute('data-state')).toBe('live');
    const doing = page.locator('#fact-progress');
    await expect.poll(() => doing.textContent(), { timeout: 10_000 }).toMatch(/^Bash: echo step 1 \(since \d\d:\d\d:\d\d\)$/);
    await page.evaluate(() => ((window as unknown as { marker: string }).marker = 'not reloaded'));
    gate(1);
    await expect.poll(() => doing.textContent(), { timeout: 10_000 }).toMatch(/^Bash: echo step 2/);
    await screenshot(page, join(SCREENSHOTS, 'usage-1-run-progress.png'));
    gate(2);
    await waitFor('the run to succeed', async () => (await runState(board, runId)) === 'succeeded');
    await expect.poll(() => page.locator('#fact-usage').textContent(), { timeout: 10_000 }).toBe('cost $0.0123 · 12 in / 7 out / 3000 cached tokens');
    await expect.poll(() => doing.count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { marker: string }).marker)).toBe('not reloaded');
    await screenshot(page, join(SCREENSHOTS, 'usage-2-run-cost.png'));

    await page.goto(`${board.url}/`);
    const login = page.locator('#usage tr[data-usage="login:default"]');
    await expect.poll(() => login.textContent(), { timeout: 10_000 }).toBe('login default1$0.01231273000');
    await expect(page.locator('#usage tr[data-usage="lane:talk"] td').first().textContent()).resolves.toBe('1');
    await screenshot(page, join(SCREENSHOTS, 'usage-3-board.png'));
    expect(errors).toEqual([]);
  });
});
