/**
 * Nothing stale or wrong on the pages (issue 28), in headless Chromium: a board daemon (`local`) and a
 * second computer (`c2`) on the same log, both running the Codex stand-in, which reports tokens but no
 * cost. Each display the issue found wrong, with what it must say instead: a finished run found by a
 * prefix of its id; "Ran for" from the agent process's own start and exit; an unknown cost said to be
 * unknown, never $0; no finished run shown or counted as waiting on the computer that lost its claim;
 * sessions with the close the log records; a computer that stopped is offline, not draining for ever.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boardInput } from '../../actors/board/boardInputs.ts';
import { hashToken, newToken } from '../../adapters/http/tokens.ts';
import { type Daemon, startDaemon } from '../../apps/daemon/startDaemon.ts';
import { agentBin } from '../fixtures/agents/bin.ts';
import { holderOf, offerGoesUnanswered, runState, SCREENSHOTS, screenshot, startTestDaemon, submit, type TestBoard, waitFor } from './webSupport.ts';
import { hasChromium, newBrowserContext } from './workerChromium.ts';

describe.skipIf(!hasChromium)('nothing stale or wrong on the pages', () => {
  let board: TestBoard;
  let second: Daemon | null = null;
  let context: BrowserContext;
  let page: Page;
  const errors: string[] = [];
  const codex = join(agentBin(join(SCREENSHOTS, 'stale-agents')).bin, 'codex');
  /** The stand-in waits in its lane's workspace (on whichever computer runs it) for gate-<k> after its k-th step. */
  const gate = (lane: string, k: number) => {
    for (const computer of ['local', 'c2']) {
      const folder = join(dirname(board.db), 'workspaces', computer, lane);
      try {
        writeFileSync(join(folder, `gate-${k}`), '');
      } catch {
        // That computer never made this lane's workspace.
      }
    }
  };
  const details = async (runId: string) => (await (await fetch(`${board.url}/v1/runs/${runId}/details`)).json()) as Record<string, unknown>;

  beforeAll(async () => {
    [board, context] = await Promise.all([startTestDaemon({ exec: codex, tickS: 1 }), newBrowserContext({ viewport: { width: 1280, height: 900 } })]);
    const token = newToken();
    await board.daemon().board!.board.actor.input(boardInput.computerAdded('c2', hashToken(token), Date.now()));
    second = await startDaemon({ db: board.db, server: board.url, computer: 'c2', token, exec: codex, slots: 1, tickS: 1 });
    await waitFor('both computers on the push stream', async () => {
      const status = (await (await fetch(`${board.url}/v1/status`)).json()) as { board: { connected: string[] } };
      return status.board.connected.length === 2;
    });
    page = await context.newPage();
    page.on('pageerror', (error) => errors.push(String(error)));
  });

  afterAll(async () => {
    await context?.close();
    await second?.close();
    await board?.close();
  });

  it('shows no finished run as waiting, at any moment, on the computer that lost its claim', async () => {
    await page.goto(`${board.url}/`);
    await expect.poll(() => page.locator('#connection').getAttribute('data-state')).toBe('live');
    // Every row the lanes ever draw, as it is drawn: a finished run's row would be caught between two checks.
    await page.evaluate(() => {
      const w = window as unknown as { drawn: { run: string; state: string }[] };
      w.drawn = [];
      new MutationObserver(() => {
        for (const row of document.querySelectorAll<HTMLElement>('#lanes tr[data-run]'))
          w.drawn.push({ run: row.dataset.run!, state: row.dataset.state! });
      }).observe(document.getElementById('lanes')!, { childList: true, subtree: true });
    });
    // A run is offered to one computer at a time: both turns go to the computer that claims the first.
    // The second's offer left unanswered there moves it to the other computer, which is told
    // conversation_busy and parks it: the computer that will lose its claim holds a copy.
    const first = await submit(board, 'talk', 'the first turn STEPS=1');
    const next = await submit(board, 'talk', 'the second turn');
    await page.locator(`#lanes tr[data-run="${next}"]`).first().waitFor({ timeout: 10_000 });
    await waitFor("the first turn's agent to start", async () => (await details(first)).state === 'running');
    const holder = await holderOf(board, first);
    await offerGoesUnanswered(board, next, holder);
    const other = holder === 'local' ? 'c2' : 'local';
    await page.locator(`#lanes tr[data-run="${next}"] li[data-computer="${other}"][data-copy-state="parked"]`).first().waitFor({ timeout: 10_000 });
    gate('talk', 1);
    await waitFor(
      'both turns to succeed',
      async () => (await runState(board, first)) === 'succeeded' && (await runState(board, next)) === 'succeeded',
    );
    // The loser's copies wait out their own timers (30 s for a parked one); the page shows none of them.
    await expect.poll(() => page.locator('#lanes tr[data-run]').count(), { timeout: 5_000 }).toBe(0);
    await expect.poll(() => page.locator('#summary').textContent()).toMatch(/^0 running, 0 claiming, 0 parked, 0 queued/);
    await screenshot(page, join(SCREENSHOTS, 'stale-1-board-after-contention.png'));
    const drawn = await page.evaluate(() => (window as unknown as { drawn: { run: string; state: string; at: number }[] }).drawn);
    expect(drawn.length).toBeGreaterThan(0);
    // Nothing was drawn of a turn once it had finished (a snapshot is drawn within a second of the log).
    const finishedAt = new Map<string, number>();
    for (const runId of [first, next]) finishedAt.set(runId, Date.parse(String((await details(runId)).finished_at)));
    const stale = drawn.filter((d) => finishedAt.has(d.run) && d.at > finishedAt.get(d.run)! + 1_000);
    expect(stale).toEqual([]);
    // At the root: once one computer claimed the second turn, the board withdrew it from the other,
    // which dropped the copy it had parked rather than wait out its 30 s.
    const timeline = await context.newPage();
    await timeline.goto(`${board.url}/runs/${next}`);
    const entry = timeline.locator('#timeline tr[data-step="run.withdrawn"]');
    await entry.first().waitFor({ timeout: 10_000 });
    await expect(entry.first().locator('td.why').textContent()).resolves.toBe('withdrawn: another computer claimed it');
    await timeline.close();
    expect(errors).toEqual([]);
  });

  it('finds a finished run by a prefix of its id, and says how long its agent process ran and that its cost is unknown', async () => {
    const runId = await submit(board, 'timed', 'a turn that takes a while STEPS=1');
    await waitFor('its agent to start', async () => (await details(runId)).state === 'running');
    // The process runs on after its first heartbeat: "Ran for" must count it all.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    gate('timed', 1);
    await waitFor('the run to succeed', async () => (await runState(board, runId)) === 'succeeded');

    const answer = await fetch(`${board.url}/runs/${runId.slice(0, 8)}`, { redirect: 'manual' });
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toBe(`/runs/${runId}`);
    await page.goto(`${board.url}/runs/${runId.slice(0, 8)}`);
    await page.waitForURL(`**/runs/${runId}`);
    await page.locator('#timeline tr[data-step="run.process.exited"]').waitFor({ timeout: 10_000 });
    const at = async (step: string) =>
      Date.parse((await page.locator(`#timeline tr[data-step="${step}"] th time`).first().getAttribute('datetime'))!);
    const ran = (await at('run.process.exited')) - (await at('run.process.began'));
    expect(ran).toBeGreaterThanOrEqual(1_200);
    expect((await details(runId)).duration_ms).toBe(ran);
    await expect(page.locator('#fact-ran-for').textContent()).resolves.toBe(`${(ran / 1000).toFixed(1)} s`);
    await expect(page.locator('#fact-cost').textContent()).resolves.toBe('cost unknown');
    // Summed up by its end on the board, not by another computer's stale copy.
    await expect(page.locator('#summary').textContent()).resolves.toMatch(/^It succeeded on (local|c2): completed: succeeded/);
    await screenshot(page, join(SCREENSHOTS, 'stale-2-run-page.png'));

    await page.goto(`${board.url}/lanes/timed`);
    await expect.poll(() => page.locator('#turns li.turn [data-fact="cost"]').first().textContent(), { timeout: 10_000 }).toBe('cost unknown');
    await page.goto(`${board.url}/`);
    const login = page.locator('#usage tr[data-usage="login:default"] td').nth(1);
    await expect.poll(() => login.textContent(), { timeout: 10_000 }).toBe('unknown');
    expect(errors).toEqual([]);
  });

  it('lists sessions with the close the log records, and a stopped computer as offline', async () => {
    await page.goto(`${board.url}/`);
    await expect.poll(() => page.locator('#connection').getAttribute('data-state')).toBe('live');
    await expect.poll(() => page.locator('#sessions tbody tr').count(), { timeout: 10_000 }).toBeGreaterThan(0);
    await expect(page.locator('#sessions').textContent()).resolves.not.toContain('records none yet');
    // Each session was closed between turns (its process ended): the table says so.
    await expect.poll(() => page.locator('#sessions tbody tr').filter({ hasText: 'closed' }).count(), { timeout: 10_000 }).toBeGreaterThan(0);

    await second!.close();
    second = null;
    const c2 = page.locator('#computers tbody tr').filter({ hasText: 'c2' });
    await expect.poll(() => c2.textContent(), { timeout: 10_000 }).toContain('not connected');
    await expect(c2.textContent()).resolves.toContain('offline: takes nothing until its daemon connects again');
    await expect(c2.textContent()).resolves.not.toContain('draining');
    await screenshot(page, join(SCREENSHOTS, 'stale-3-board-offline.png'));
    expect(errors).toEqual([]);
  });
});
