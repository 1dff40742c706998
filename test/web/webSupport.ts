import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { onTestFinished } from 'vitest';
import { boardInput } from '../../actors/board/boardInputs.ts';
import { type Daemon, type DaemonOptions, startDaemon } from '../../apps/daemon/startDaemon.ts';
import { repoRoot } from '../support/processes.ts';

export const SCREENSHOTS = join(repoRoot, 'test-output', 'web');
mkdirSync(SCREENSHOTS, { recursive: true });

/**
 * The pages as a person sees them, for the issues' notes and a review of a change to the web view, not
 * for any assertion: taken when RUNLEDGER_SCREENSHOTS is set (`RUNLEDGER_SCREENSHOTS=1 npx vitest run
 * test/web`). A full-page one costs Chromium about 0.45 s of CPU to lay out, raster and encode; the
 * browser tests took 27 of them at every run of the suite, about 12 s of its CPU.
 */
export const takesScreenshots = Boolean(process.env.RUNLEDGER_SCREENSHOTS);

/** `page` as it shows now, in `path` (the whole page unless told), when screenshots are asked for. */
export async function screenshot(page: Page, path: string, { fullPage = true } = {}): Promise<void> {
  if (takesScreenshots) await page.screenshot({ path, fullPage });
}

export const AGENT = `/bin/sh ${join(repoRoot, 'test/web/sleepyAgent.sh')}`;

/**
 * The same agent under the name `claude` with `--output-format stream-json`: the daemon then reads
 * its output as Claude Code's events, records the session it announces and resumes it next turn.
 */
export function claudeLikeAgent(): string {
  // Beside the screenshots: a scratch file of the tests, ignored by git.
  const bin = join(SCREENSHOTS, 'bin');
  mkdirSync(bin, { recursive: true });
  const path = join(bin, 'claude');
  writeFileSync(path, `#!/bin/sh\nexec /bin/sh "${join(repoRoot, 'test/web/sleepyAgent.sh')}" "$@"\n`, { mode: 0o755 });
  return `${path} -p --output-format stream-json`;
}

/**
 * A turn of sleepyAgent.sh held open until the test has seen what it needs of it: `word` goes in its
 * prompt, `release` lets it answer ("held until released"). Released when the test ends in any case,
 * so a failed test leaves no agent waiting. The file is a scratch file beside the screenshots.
 */
export function holdOpen(): { readonly word: string; release(): void } {
  const path = join(SCREENSHOTS, 'holds', randomUUID());
  mkdirSync(join(SCREENSHOTS, 'holds'), { recursive: true });
  const release = () => writeFileSync(path, '');
  onTestFinished(release);
  return { word: `hold=${path}`, release };
}

export interface TestBoard {
  readonly db: string;
  readonly url: string;
  readonly token: string;
  /** The running daemon: a new one after `restart`. */
  daemon(): Daemon;
  /** Stops the daemon and starts it again on the same log and port, as a restart would. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** A real daemon in this process (board and computer `local`) on a temp log and a port the system picks. */
export async function startTestDaemon(options: Partial<DaemonOptions> = {}): Promise<TestBoard> {
  const dir = mkdtempSync(join(tmpdir(), 'runledger-web-'));
  const db = join(dir, 'runledger.db');
  const settings: DaemonOptions = { db, port: 0, exec: AGENT, slots: 1, ...options };
  let daemon = await startDaemon(settings);
  const url = daemon.url!;
  return {
    db,
    url,
    token: readFileSync(join(dir, 'token'), 'utf8').trim(),
    daemon: () => daemon,
    async restart() {
      await daemon.close();
      daemon = await startDaemon({ ...settings, port: Number(new URL(url).port) });
    },
    async close() {
      await daemon.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `POST /v1/runs` as `runledger submit` does it; resolves to the run id. */
export async function submit(board: Pick<TestBoard, 'url' | 'token'>, lane: string, prompt: string): Promise<string> {
  const response = await fetch(`${board.url}/v1/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${board.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ lane, prompt }),
  });
  if (response.status !== 201) throw new Error(`submit to lane ${lane}: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { run_id: string }).run_id;
}

export async function runState(board: Pick<TestBoard, 'url'>, runId: string): Promise<string> {
  const response = await fetch(`${board.url}/v1/runs/${runId}`);
  return ((await response.json()) as { state: string }).state;
}

/** Waits for `check` to hold, bounded: a real process and a real socket take the time they take. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The computer that holds `runId`'s claim, once it has one (`computer_id` of `GET /v1/runs/:id`). */
export async function holderOf(board: Pick<TestBoard, 'url'>, runId: string): Promise<string> {
  let holder = '';
  await waitFor(`run ${runId} to be claimed`, async () => {
    const view = (await (await fetch(`${board.url}/v1/runs/${runId}`)).json()) as { computer_id?: string };
    holder = view.computer_id ?? '';
    return holder !== '';
  });
  return holder;
}

/**
 * The offer of `runId` to `computerId` taken as unanswered, recorded as the push hub records a frame
 * left without an ack for 5 s (docs/rules.md#dispatch): the board offers the run's lane to the next
 * computer. A run is offered to one computer at a time, so this is how a test gets copies of one run
 * queued on two computers (the first keeps the copy it queued), as a computer slow to ack leaves them.
 */
export async function offerGoesUnanswered(board: TestBoard, runId: string, computerId: string): Promise<void> {
  await board.daemon().board!.board.actor.input(boardInput.declined(runId, computerId, Date.now(), 'unanswered'));
}
