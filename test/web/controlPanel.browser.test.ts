/**
 * The web view as the team's control panel, in headless Chromium (issue 28): a real daemon in this
 * process runs the Claude Code stand-in; the pages sign in once with the submit token, send a lane's
 * turns from the lane page (each reply shown as it lands, no reload), start a lane from the board
 * page, cancel a run and run a finished one's prompt again from its page. Writes without the sign-in
 * cookie are refused 401, writes from another site's page 403, and a 390-pixel-wide screen never
 * scrolls sideways.
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
  const bin = join(SCREENSHOTS, 'bin-panel');
  mkdirSync(bin, { recursive: true });
  const path = join(bin, 'claude');
  writeFileSync(path, `#!/bin/sh\nexec /bin/sh "${STAND_IN}" "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

describe.skipIf(!hasChromium)('the control panel in headless Chromium', () => {
  let board: TestBoard;
  let context: BrowserContext;
  let page: Page;
  const errors: string[] = [];
  /** The stand-in waits in its lane's workspace for gate-<k> after its k-th step (prompts with STEPS=n). */
  const gate = (lane: string, k: number) => writeFileSync(join(dirname(board.db), 'workspaces', 'local', lane, `gate-${k}`), '');

  beforeAll(async () => {
    [board, context] = await Promise.all([startTestDaemon({ exec: claudeStandIn() }), newBrowserContext({ viewport: { width: 1280, height: 900 } })]);
    page = await context.newPage();
    page.on('pageerror', (error) => errors.push(String(error)));
    // A refused write (the 401 asked for) is logged by Chromium as a failed resource: expected here.
    page.on('console', (m) => m.type() === 'error' && !/status of 40[13]/.test(m.text()) && errors.push(m.text()));
  });

  afterAll(async () => {
    await context?.close();
    await board?.close();
  });

  async function signIn(): Promise<void> {
    const form = page.locator('#sign-in');
    await form.waitFor({ timeout: 10_000 });
    await page.locator('#sign-in-token').fill('not the token');
    await page.locator('#sign-in button[type="submit"]').click();
    await expect.poll(() => page.locator('#sign-in-status').textContent()).toMatch(/^Not signed in: that is not a submit token of this board/);
    await page.locator('#sign-in-token').fill(board.token);
    await page.locator('#sign-in button[type="submit"]').click();
  }

  it('holds a conversation of three turns sent from the lane page, each reply shown as it lands', async () => {
    await page.goto(`${board.url}/lanes/chat`);
    await expect.poll(() => page.locator('#connection').getAttribute('data-state')).toBe('live');
    await expect(page.locator('#turns').textContent()).resolves.toContain('no turns yet');
    await screenshot(page, join(SCREENSHOTS, 'panel-1-sign-in.png'));
    await signIn();
    await page.locator('#send-form').waitFor();
    // The cookie holds the token where no script reads it, for this board's pages only.
    const [cookie] = await context.cookies(board.url);
    expect(cookie).toMatchObject({ name: 'runledger_token', httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(await page.evaluate(() => document.cookie)).toBe('');
    await page.evaluate(() => ((window as unknown as { marker: string }).marker = 'not reloaded'));

    const asked = ['What is a lane?', 'And a turn?', 'Thank you.'];
    for (const [i, prompt] of asked.entries()) {
      await page.locator('#next-prompt').fill(prompt);
      await page.locator('#send-button').click();
      await expect.poll(() => page.locator('#action-status').textContent()).toMatch(/^Sent as run /);
      const turn = page.locator('#turns li.turn').nth(i);
      // The stand-in answers `turn N (model): <the prompt>`: its session resumed, one turn more each time.
      await expect.poll(() => turn.locator('.reply pre').textContent(), { timeout: 15_000 }).toBe(`turn ${i + 1} (claude-sonnet-4-5): ${prompt}`);
      await expect.poll(() => turn.getAttribute('data-state'), { timeout: 10_000 }).toBe('succeeded');
      await expect(turn.locator('.prompt pre').textContent()).resolves.toBe(prompt);
    }
    expect(await page.locator('#turns li.turn').count()).toBe(3);
    const facts = await page.locator('#turns li.turn').first().locator('.turn-facts').textContent();
    expect(facts).toMatch(/^Turn 1 .*succeeded.*on local.*asked \d\d:\d\d:\d\d.*took \d+(\.\d)? m?s.*\$0\.0123$/);
    expect(await page.evaluate(() => (window as unknown as { marker: string }).marker)).toBe('not reloaded');
    await screenshot(page, join(SCREENSHOTS, 'panel-2-lane-conversation.png'));

    // Every lane name links to its page: from the history, from the run page.
    await page.goto(`${board.url}/history`);
    await page.locator('#history a.lane-link[href="/lanes/chat"]').first().click();
    await page.waitForURL('**/lanes/chat');
    await page.locator('#turns li.turn').first().waitFor();
    expect(errors).toEqual([]);
  });

  it("shows a running turn's agent activity on the lane page and the run page, and cancels it from the run page", async () => {
    const runId = await submit(board, 'busy', 'work in STEPS=2');
    await page.goto(`${board.url}/lanes/busy`);
    const doing = page.locator(`#turns li[data-run="${runId}"] .doing`);
    await expect.poll(() => doing.textContent(), { timeout: 10_000 }).toMatch(/^Doing now: Bash: echo step 1/);
    gate('busy', 1);
    await expect.poll(() => doing.textContent(), { timeout: 10_000 }).toMatch(/^Doing now: Bash: echo step 2 \(since \d\d:\d\d:\d\d\)$/);
    await screenshot(page, join(SCREENSHOTS, 'panel-3-lane-activity.png'));

    await page.locator(`#turns li[data-run="${runId}"] a.run-link`).click();
    await page.waitForURL(`**/runs/${runId}`);
    await expect.poll(() => page.locator('#fact-progress').textContent(), { timeout: 10_000 }).toMatch(/^Bash: echo step 2/);
    await expect(page.locator('#crumb-lane a').getAttribute('href')).resolves.toBe('/lanes/busy');
    await screenshot(page, join(SCREENSHOTS, 'panel-4-run-activity.png'));
    await page.locator('#actions button[data-action="cancel"]').click();
    await expect.poll(() => page.locator('#action-status').textContent()).toMatch(/^Cancel asked for run/);
    await waitFor(
      'the run to be cancelled',
      async () => (await runState(board, runId)) === 'failed' || (await runState(board, runId)) === 'cancelled',
    );
    await expect.poll(() => page.locator('#fact-state').textContent(), { timeout: 10_000 }).toMatch(/cancelled|failed/);
    expect(await page.locator('#timeline').textContent()).toContain('cancel');
    expect(errors).toEqual([]);
  });

  it("runs a finished run's prompt again as a new turn of its lane, from the run page", async () => {
    const first = await submit(board, 'again', 'say it once');
    await waitFor('the first turn to succeed', async () => (await runState(board, first)) === 'succeeded');
    await page.goto(`${board.url}/runs/${first}`);
    const again = page.locator('#actions button[data-action="run-again"]');
    await again.click();
    await expect.poll(() => page.locator('#action-status').textContent()).toMatch(/^Sent again as run \w+ of lane again\.$/);
    await page.locator('#action-status a.lane-link').click();
    await page.waitForURL('**/lanes/again');
    const second = page.locator('#turns li.turn').nth(1);
    await expect.poll(() => second.locator('.reply pre').textContent(), { timeout: 15_000 }).toBe('turn 2 (claude-sonnet-4-5): say it once');
    expect(errors).toEqual([]);
  });

  it('starts a new lane from the board page', async () => {
    await page.goto(`${board.url}/`);
    await page.locator('#new-lane-form').waitFor({ timeout: 10_000 });
    await page.locator('#new-lane').fill('fresh');
    await page.locator('#new-prompt').fill('Hello, new lane.');
    await page.locator('#new-lane-form button[type="submit"]').click();
    await page.waitForURL('**/lanes/fresh');
    await expect
      .poll(() => page.locator('#turns li.turn .reply pre').first().textContent(), { timeout: 15_000 })
      .toBe('turn 1 (claude-sonnet-4-5): Hello, new lane.');
    expect(errors).toEqual([]);
  });

  it('refuses a write without the sign-in cookie (401) and one from another origin (403)', async () => {
    const body = JSON.stringify({ lane: 'refused', prompt: 'never sent' });
    const headers = { 'content-type': 'application/json' };
    // From the board's own page, signed out: the API asks for the token.
    await page.goto(`${board.url}/lanes/refused`);
    const signedOut = await page.evaluate(
      async ([b, h]) => {
        await fetch('/session', { method: 'DELETE' });
        const r = await fetch('/v1/runs', { method: 'POST', headers: h, body: b });
        return { status: r.status, body: await r.json() };
      },
      [body, headers] as const,
    );
    expect(signedOut).toMatchObject({ status: 401, body: { detail: { error: 'unauthorized' } } });
    await page.reload();
    await page.locator('#sign-in').waitFor({ timeout: 10_000 });
    // Another site's page (another origin) posting with the cookie the browser holds, and a form post.
    await signIn();
    await page.locator('#send-form').waitFor();
    const cookie = (await context.cookies(board.url)).find((c) => c.name === 'runledger_token')!;
    const forged = await fetch(`${board.url}/v1/runs`, {
      method: 'POST',
      headers: { ...headers, origin: 'http://evil.example', cookie: `runledger_token=${cookie.value}` },
      body,
    });
    expect(forged.status).toBe(403);
    expect(await forged.json()).toMatchObject({ detail: { error: 'cross_site' } });
    const cancel = await fetch(`${board.url}/v1/runs/whatever/cancel`, {
      method: 'POST',
      headers: { origin: 'null', authorization: `Bearer ${board.token}` },
    });
    expect(cancel.status).toBe(403);
    const signInElsewhere = await fetch(`${board.url}/session`, {
      method: 'POST',
      headers: { ...headers, origin: 'http://evil.example' },
      body: JSON.stringify({ token: board.token }),
    });
    expect(signInElsewhere.status).toBe(403);
    // The CLI's request (a Bearer token, no Origin) is unaffected.
    expect(
      (await fetch(`${board.url}/v1/runs`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${board.token}` }, body })).status,
    ).toBe(201);
    expect(errors).toEqual([]);
  });

  it('takes each run into the history as it finishes, with its cost, without a reload', async () => {
    await page.goto(`${board.url}/history`);
    await expect.poll(() => page.locator('#connection').getAttribute('data-state')).toBe('live');
    await page.locator('#history table').waitFor({ timeout: 10_000 });
    await page.evaluate(() => ((window as unknown as { marker: string }).marker = 'not reloaded'));
    const runId = await submit(board, 'later', 'finished while the history is open');
    const row = page.locator(`#history tr[data-run="${runId}"]`);
    await row.waitFor({ timeout: 10_000 });
    await expect(page.locator('#history tbody tr').first().getAttribute('data-run')).resolves.toBe(runId);
    await expect(row.locator('td.cost').textContent()).resolves.toBe('$0.0123');
    expect(await page.evaluate(() => (window as unknown as { marker: string }).marker)).toBe('not reloaded');
    await screenshot(page, join(SCREENSHOTS, 'panel-5-history-live.png'));
    expect(errors).toEqual([]);
  });

  it('fits a 390-pixel-wide screen without scrolling sideways', async () => {
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    const listed = (await (await fetch(`${board.url}/v1/runs?lane=chat&limit=1`)).json()) as { runs: { run_id: string }[] };
    for (const [path, name] of [
      ['/', 'board'],
      ['/lanes/chat', 'lane'],
      ['/history', 'history'],
      [`/runs/${listed.runs[0]!.run_id}`, 'run'],
    ]) {
      await phone.goto(`${board.url}${path}`);
      await phone.locator('main').waitFor();
      await phone.waitForLoadState('networkidle').catch(() => undefined);
      await phone.waitForTimeout(300);
      const { scroll, width } = await phone.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        width: document.documentElement.clientWidth,
      }));
      await screenshot(phone, join(SCREENSHOTS, `panel-390-${name}.png`), { fullPage: false });
      expect({ path, scroll }).toEqual({ path, scroll: width });
    }
    await phone.close();
  });
});
