/**
 * The web view after a run ends (issue 15), in headless Chromium: the history of finished runs
 * (newest first, paged, filtered by lane, state, computer and text), the run page's facts (prompt,
 * reply, error, stderr tail, timestamps, durations, the timeline by phase), one row per run in a
 * lane however many computers hold a copy, and bookkeeping kept out of "Recent decisions" unless
 * asked for. Each test waits for what it needs, with a bound.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boardInput } from '../../actors/board/boardInputs.ts';
import { hashToken, newToken } from '../../adapters/http/tokens.ts';
import { type Daemon, startDaemon } from '../../apps/daemon/startDaemon.ts';
import {
  AGENT,
  holderOf,
  holdOpen,
  offerGoesUnanswered,
  runState,
  screenshot,
  startTestDaemon,
  submit,
  type TestBoard,
  waitFor,
} from './webSupport.ts';
import { hasChromium, newBrowserContext } from './workerChromium.ts';

/** Where the note looks at them. */
const SCREENS = '/work/brief/screens';
const FINISHED = new Set(['succeeded', 'failed', 'cancelled', 'resolved']);

describe.skipIf(!hasChromium)('the history, the run page and the folded lanes in headless Chromium', () => {
  let board: TestBoard;
  let second: Daemon;
  let context: BrowserContext;
  let page: Page;
  const errors: string[] = [];
  const runs: Record<string, string> = {};

  const finish = async (lane: string, prompt: string): Promise<string> => {
    const runId = await submit(board, lane, prompt);
    await waitFor(`run ${runId} to finish`, async () => FINISHED.has(await runState(board, runId)), 20_000);
    return runId;
  };
  const historyIds = () => page.locator('#history tbody tr').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.run));
  const computerOf = async (runId: string) =>
    ((await (await fetch(`${board.url}/v1/runs/${runId}`)).json()) as { computer_id?: string }).computer_id ?? null;

  beforeAll(async () => {
    mkdirSync(SCREENS, { recursive: true });
    [board, context] = await Promise.all([startTestDaemon({ exec: AGENT }), newBrowserContext({ viewport: { width: 1280, height: 900 } })]);
    const token = newToken();
    await board.daemon().board!.board.actor.input(boardInput.computerAdded('c2', hashToken(token), Date.now()));
    second = await startDaemon({ db: board.db, server: board.url, computer: 'c2', token, exec: AGENT, slots: 1 });
    await waitFor('both computers on the push stream', async () => {
      const status = (await (await fetch(`${board.url}/v1/status`)).json()) as { board: { connected: string[] } };
      return status.board.connected.length === 2;
    });
    // One after another, so that the order they finished in is known.
    runs.a1 = await finish('alpha', 'the first alpha turn, sleep=50');
    runs.a2 = await finish('alpha', 'the second alpha turn, with a NeedLe in it, sleep=50');
    runs.b1 = await finish('beta', 'a beta turn that breaks, stderr=agent-broke exit=3 sleep=50');
    runs.b2 = await finish('beta', 'a quiet beta turn, sleep=50');
    page = await context.newPage();
    page.on('pageerror', (error) => errors.push(String(error)));
    page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
  }, 90_000);

  afterAll(async () => {
    await context?.close();
    await second?.close();
    await board?.close();
  });

  it('history_lists_finished_runs_newest_first_a_page_at_a_time', async () => {
    await page.goto(`${board.url}/history?limit=3`);
    await page.locator('#history table').waitFor({ timeout: 10_000 });
    expect(await page.locator('#history caption').textContent()).toContain('newest first');
    expect(await historyIds()).toEqual([runs.b2, runs.b1, runs.a2]);
    await screenshot(page, join(SCREENS, 'history.png'));
    await page.locator('#pager a[rel="next"]').click();
    await page.waitForURL(/before=\d+/);
    await expect.poll(historyIds, { timeout: 10_000 }).toEqual([runs.a1]);
    // Nothing older: no link to an empty page.
    expect(await page.locator('#pager a[rel="next"]').count()).toBe(0);
    await page.locator('#pager a[rel="first"]').click();
    await expect.poll(historyIds, { timeout: 10_000 }).toEqual([runs.b2, runs.b1, runs.a2]);
    // Each row leads to its run's page.
    await page.locator(`#history tr[data-run="${runs.b1}"] a.run-link`).click();
    await page.waitForURL(`**/runs/${runs.b1}`);
    expect(errors).toEqual([]);
  });

  it('history_filters_by_lane_state_computer_and_text', async () => {
    const filtered = async (fill: (p: Page) => Promise<unknown>) => {
      await page.goto(`${board.url}/history`);
      await page.locator('#history table').waitFor({ timeout: 10_000 });
      await fill(page);
      await page.getByRole('button', { name: 'Show' }).click();
      await page.waitForURL(/\?/);
      await page.locator('#history table, #history .empty').first().waitFor({ timeout: 10_000 });
      return historyIds();
    };
    expect(await filtered((p) => p.getByLabel('Lane').fill('beta'))).toEqual([runs.b2, runs.b1]);
    expect(await filtered((p) => p.getByLabel('State').selectOption('failed'))).toEqual([runs.b1]);
    expect(await filtered((p) => p.getByLabel('Text in the prompt, reply or error').fill('needle'))).toEqual([runs.a2]);
    // The filters live in the address: the form shows them again.
    expect(await page.getByLabel('Text in the prompt, reply or error').inputValue()).toBe('needle');
    const mine = [runs.b2!, runs.b1!, runs.a2!, runs.a1!];
    const onC2 = [];
    for (const id of mine) if ((await computerOf(id)) === 'c2') onC2.push(id);
    expect(await filtered((p) => p.getByLabel('Computer').fill('c2'))).toEqual(onC2);
    if (onC2.length === 0) expect(await page.locator('#history .empty').textContent()).toContain('No finished run matching computer c2');
    // A bad filter is refused naming it.
    const refused = await fetch(`${board.url}/history/runs?state=done`);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { detail: { message: string } }).detail.message).toContain('state must be one of succeeded, failed');
    expect(errors).toEqual([]);
  });

  it('run_page_shows_prompt_reply_error_stderr_timestamps_durations_and_phases', async () => {
    await page.goto(`${board.url}/runs/${runs.b1}`);
    await page.locator('#timeline table').waitFor({ timeout: 10_000 });
    expect(await page.locator('#prompt').textContent()).toContain('a beta turn that breaks');
    expect(await page.locator('#stderr').textContent()).toContain('agent-broke');
    expect(await page.locator('#error').textContent()).not.toBe('');
    expect(await page.locator('#fact-state').textContent()).toBe('failed');
    expect(await page.locator('#fact-exit').textContent()).toBe('exited 3');
    for (const id of ['submitted', 'claimed', 'started', 'finished'])
      expect(await page.locator(`#fact-${id} time`).textContent()).toMatch(/^\d\d:\d\d:\d\d\.\d{3}$/);
    for (const id of ['queued-for', 'ran-for', 'total']) expect(await page.locator(`#fact-${id}`).textContent()).toMatch(/^(\d+ ms|\d+\.\d s)$/);
    const phases = await page.locator('#timeline tbody').evaluateAll((groups) => groups.map((g) => (g as HTMLElement).dataset.phase));
    expect(phases).toEqual(['queued', 'claimed', 'running', 'finished']);
    expect(await page.locator('#timeline tbody[data-phase="queued"] tr[data-step="board.run.queued"]').count()).toBe(1);
    expect(await page.locator('#timeline tbody[data-phase="finished"] tr[data-step="board.run.finished"]').count()).toBe(1);
    await screenshot(page, join(SCREENS, 'run-failed.png'));

    await page.goto(`${board.url}/runs/${runs.a1}`);
    await expect.poll(() => page.locator('#reply').textContent(), { timeout: 10_000 }).toContain('slept 50 ms');
    expect(await page.locator('#fact-state').textContent()).toBe('succeeded');
    expect(await page.locator('#error').count()).toBe(0);
    expect(errors).toEqual([]);
  });

  it('run_page_fills_in_live_as_the_run_moves', async () => {
    const held = holdOpen();
    const runId = await submit(board, 'gamma', `a live turn, ${held.word}`);
    await page.goto(`${board.url}/runs/${runId}`);
    // Its process has begun (the board calls it claimed until its first heartbeat) and it has not finished.
    await page.locator('#fact-started time').waitFor({ timeout: 10_000 });
    expect(await page.locator('#fact-finished').textContent()).toBe('not yet');
    expect(await page.locator('#fact-state').textContent()).toMatch(/^(claimed|running)$/);
    expect(await page.locator('#fact-total').textContent()).toMatch(/^for \d+ s and counting$/);
    held.release();
    await expect.poll(() => page.locator('#fact-state').textContent(), { timeout: 10_000 }).toBe('succeeded');
    await expect.poll(() => page.locator('#reply').textContent(), { timeout: 10_000 }).toContain('held until released');
    expect(await page.locator('#fact-total').textContent()).toMatch(/^(\d+ ms|\d+\.\d s)$/);
    expect(errors).toEqual([]);
  });

  it('lane_rows_fold_the_computers_copies_of_a_run_into_one', async () => {
    await page.goto(`${board.url}/`);
    await expect.poll(() => page.locator('#connection').getAttribute('data-state')).toBe('live');
    // A run is offered to one computer at a time: both turns go to the computer that claims the first,
    // where the second waits. Its offer left unanswered there moves it to the other computer, which
    // queues it too: one run, a copy in each computer's queue.
    const open = holdOpen();
    const first = await submit(board, 'fold', `the open turn, ${open.word}`);
    const next = await submit(board, 'fold', 'the next turn, sleep=50');
    const row = page.locator(`#lanes section[data-lane="fold"] tr[data-run="${next}"]`);
    const holder = await holderOf(board, first);
    await expect.poll(() => row.locator('.copies li').count(), { timeout: 10_000 }).toBe(1);
    await offerGoesUnanswered(board, next, holder);
    await expect.poll(() => row.locator('.copies li').count(), { timeout: 10_000 }).toBe(2);
    expect(await row.count()).toBe(1);
    expect((await row.locator('.copies li').allTextContents()).map((t) => t.split(' ')[0])).toEqual(expect.arrayContaining(['local', 'c2']));
    expect(await page.locator(`#lanes section[data-lane="fold"] tr[data-run="${first}"]`).count()).toBe(1);
    // Polled: a computer may be asking for the next turn's claim (`claiming`) before it is told to wait.
    await expect
      .poll(() => page.locator('#lanes section[data-lane="fold"] caption').textContent(), { timeout: 5_000 })
      .toMatch(/2 runs: 1 running, 1 (parked|queued)/);
    await screenshot(page, join(SCREENS, 'board.png'));
    open.release();
    await waitFor('the fold turns to finish', async () => (await runState(board, next)) === 'succeeded', 20_000);
    expect(errors).toEqual([]);
  });

  it('recent_decisions_hide_bookkeeping_unless_asked_and_bookkeeping_never_pushes_a_decision_out', async () => {
    await page.goto(`${board.url}/`);
    await expect.poll(() => page.locator('#connection').getAttribute('data-state')).toBe('live');
    await page.locator('#activity li').first().waitFor({ timeout: 10_000 });
    const visibleSteps = () => page.locator('#activity li:visible code.step').allTextContents();
    // The log holds far more than 40 decisions by now: the list is full of them, with no outbox.* among them.
    expect((await visibleSteps()).filter((s) => s.startsWith('outbox.'))).toEqual([]);
    expect((await visibleSteps()).length).toBe(40);
    expect(await page.locator('#activity li.bookkeeping').count()).toBeGreaterThan(0);
    await page.getByLabel(/Show bookkeeping too/).check();
    await expect.poll(async () => (await visibleSteps()).filter((s) => s.startsWith('outbox.')).length).toBeGreaterThan(0);
    await page.getByLabel(/Show bookkeeping too/).uncheck();
    await expect.poll(async () => (await visibleSteps()).filter((s) => s.startsWith('outbox.')).length).toBe(0);
    // Live entries are sorted the same way: a new run's decisions show, its outbox entries do not.
    const late = await submit(board, 'late', 'a late turn, sleep=50');
    await page.locator(`#activity li:visible a[href="/runs/${late}"]`).first().waitFor({ timeout: 10_000 });
    await waitFor('the late turn to finish', async () => (await runState(board, late)) === 'succeeded');
    await expect.poll(() => page.locator('#activity li.bookkeeping:not(:visible)').count()).toBeGreaterThan(0);
    expect((await visibleSteps()).filter((s) => s.startsWith('outbox.'))).toEqual([]);
    expect(errors).toEqual([]);
  });
});

describe.skipIf(!hasChromium)('the stuck banner in headless Chromium', () => {
  let context: BrowserContext;

  beforeAll(async () => {
    context = await newBrowserContext();
  });

  afterAll(async () => {
    await context?.close();
  });

  it('stuck_banner_says_no_computer_takes_work_when_none_is_connected', async () => {
    const board = await startTestDaemon({ boardOnly: true });
    const page = await context.newPage();
    try {
      await page.goto(`${board.url}/`);
      await expect.poll(() => page.locator('#connection').getAttribute('data-state')).toBe('live');
      expect(await page.locator('#stuck').isHidden()).toBe(true);
      await submit(board, 'orphan', 'nobody takes this');
      const banner = page.getByRole('alert');
      await banner.waitFor({ timeout: 10_000 });
      expect(await banner.textContent()).toBe(
        '1 run waits but no computer is connected to take it: start one (runledger daemon, or runledger daemon --server URL on another machine).',
      );
      await screenshot(page, join(SCREENS, 'board-stuck.png'));
    } finally {
      await page.close();
      await board.close();
    }
  });

  it('stuck_banner_says_a_run_waited_past_the_threshold_and_goes_once_it_is_taken', async () => {
    process.env.RUNLEDGER_WAIT_WARN_S = '1';
    const board = await startTestDaemon({ exec: AGENT, slots: 1 }).finally(() => delete process.env.RUNLEDGER_WAIT_WARN_S);
    const page = await context.newPage();
    try {
      await page.goto(`${board.url}/`);
      await expect.poll(() => page.locator('#connection').getAttribute('data-state')).toBe('live');
      const busy = holdOpen();
      const taking = await submit(board, 'busy', `takes the only slot, ${busy.word}`);
      // Claimed before the next is submitted: on a loaded machine the first can itself wait past the
      // second of warning, and the banner would rightly name it.
      await waitFor('the first run to take the slot', async () => (await runState(board, taking)) !== 'queued', 20_000);
      const waiting = await submit(board, 'other', 'waits for the slot, sleep=50');
      const banner = page.locator('#stuck[data-kind="waited_long"]');
      await banner.waitFor({ timeout: 10_000 });
      await expect
        .poll(() => banner.textContent(), { timeout: 10_000 })
        .toMatch(new RegExp(`^Run ${waiting.slice(0, 8)} has waited \\d+ s for a computer \\(the warning is at 1 s\\): .*see runledger status`));
      expect(await banner.locator('code').allTextContents()).toEqual(['runledger status', '--slots']);
      busy.release();
      await waitFor('the waiting run to finish', async () => (await runState(board, waiting)) === 'succeeded', 20_000);
      await expect.poll(() => page.locator('#stuck').isHidden(), { timeout: 5_000 }).toBe(true);
    } finally {
      await page.close();
      await board.close();
    }
  });
});
