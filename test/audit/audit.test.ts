import { describe, expect, it } from 'vitest';
import type { QueueInput } from '../../actors/lane/decideQueue.ts';
import { queueDecider } from '../../actors/lane/queueDecider.ts';
import { initialQueueState, type QueueState } from '../../actors/lane/queueState.ts';
import { decideAndAppend } from '../../runtime/actors/decideAndAppend.ts';
import { formatTimeline, runTimeline, type Timeline } from '../../runtime/audit/runTimeline.ts';
import { appendOrThrow } from '../../runtime/store/eventStore.ts';
import type { SqliteEventStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { runledger } from '../support/processes.ts';
import { input, T0 } from '../support/queueSpec.ts';
import { openTempStore, tempDbPath } from '../support/tempStore.ts';

const { configured, frame, answer, ended } = input;
const s = (seconds: number) => seconds * 1000;

/**
 * A computer's log with the two stories `audit` must tell: turn2 of lane A arrived first, was parked
 * while turn1 ran, and was claimed once the board resent its frame; b1 was skipped, another computer
 * had it. Another computer (c2) also saw turn2's frame, so its timeline spans two streams.
 */
async function recordStories(store: SqliteEventStore): Promise<void> {
  const versions = new Map<string, number>();
  let state: QueueState = initialQueueState();
  const inputs: QueueInput[] = [
    configured(1),
    frame('turn2', 'A', 0),
    frame('turn1', 'A', 1),
    answer('turn2', 409, s(2), 'conversation_busy'),
    answer('turn1', 200, s(3)),
    frame('b1', 'B', s(4)),
    ended('turn1', s(10)),
    answer('b1', 409, s(11), 'claimed_elsewhere'),
    frame('turn2', 'A', s(12)),
    answer('turn2', 200, s(13)),
    ended('turn2', s(20)),
  ];
  for (const event of inputs) {
    const outcome = await decideAndAppend(store, queueDecider, state, event, versions, (s) => store.streamVersion(s));
    if (!outcome.ok) throw outcome.conflict;
    state = outcome.state;
  }
  await appendOrThrow(store, {
    expected: { 'c2/run:turn2': 0 },
    events: [{ ...frame('turn2', 'A', s(1)), stream: 'c2/run:turn2', data: { frameId: 'g1', kind: 'run.requested', runId: 'turn2', lane: 'A' } }],
  });
}

async function storiesLog(): Promise<string> {
  const path = tempDbPath();
  const store = await openTempStore(path);
  await recordStories(store);
  await store.close();
  return path;
}

describe('audit: a run’s timeline', () => {
  it('tells a parked-then-claimed run in seq order across the streams of every owner', async () => {
    const store = await openTempStore();
    await recordStories(store);
    const timeline = (await runTimeline(store, 'turn2'))!;
    expect(timeline.streams).toEqual(['c1/lane:A', 'c1/computer:c1', 'c2/run:turn2']);
    expect(timeline.entries.map((e) => e.seq)).toEqual([...timeline.entries.map((e) => e.seq)].sort((a, b) => a - b));
    expect(timeline.entries.map((e) => `${e.owner} ${e.step}`)).toEqual([
      'c1 frame.received',
      'c1 frame.acknowledged',
      'c1 run.queued',
      'c1 run.claim.started',
      'c1 claim.answered',
      'c1 run.parked',
      'c1 frame.received',
      'c1 frame.acknowledged',
      'c1 run.unparked',
      'c1 run.claim.started',
      'c1 claim.answered',
      'c1 run.claimed',
      'c1 run.execution.ended',
      'c1 run.ended',
      // Appended last, though it happened at 00:00:01: the timeline is in log (seq) order.
      'c2 frame.received',
    ]);
    const reasons = timeline.entries.map((e) => e.reason);
    expect(reasons).toContain('frame acknowledged 202: queued');
    expect(reasons).toContain('the board answered the claim: 409 conversation_busy');
    expect(reasons).toContain('waits: an earlier turn of its conversation is still open (until 00:00:32, wait 1)');
    expect(reasons.every((r) => r.length > 0 && !r.includes('\n'))).toBe(true);
    expect(timeline.entries[0]!.time).toBe(new Date(T0).toISOString().replace('T', ' '));
  });

  it('prints `time  step  reason` lines, naming the owner when several processes wrote about the run', async () => {
    const store = await openTempStore();
    await recordStories(store);
    const text = formatTimeline((await runTimeline(store, 'turn2'))!);
    const lines = text.split('\n');
    expect(lines[0]).toBe('run turn2: 15 events in c1/lane:A, c1/computer:c1, c2/run:turn2');
    // Steps are padded to one column, so the reasons line up.
    expect(lines[6]).toBe(
      `2026-01-01 00:00:02.000Z  ${'c1 run.parked'.padEnd('c1 run.execution.ended'.length)}  waits: an earlier turn of its conversation is still open (until 00:00:32, wait 1)`,
    );
    const single = formatTimeline((await runTimeline(store, 'b1'))!).split('\n');
    expect(single.at(-1)).toBe(`2026-01-01 00:00:11.000Z  ${'run.skipped'.padEnd('frame.acknowledged'.length)}  skipped: another computer has it`);
  });

  it('is null for a run the log never saw, and refuses an id that could escape a folder', async () => {
    const store = await openTempStore();
    await recordStories(store);
    expect(await runTimeline(store, 'turn3')).toBeNull();
    // `turn` is a prefix of two run ids: only an exact id matches.
    expect(await runTimeline(store, 'turn')).toBeNull();
    await expect(runTimeline(store, '../etc')).rejects.toThrow('"../etc" is not a run or session id: ids match ^[A-Za-z0-9-]{1,64}$');
  });
});

// A real process for a timeline printed (exit 0) and for an unknown run (exit 1), the exit status as a
// shell sees it; the command's other calls in this process, through the same dispatch.
describe('runledger audit', () => {
  it('prints the parked reason of a run that waited its turn, and the skip of a run another computer had', async () => {
    const db = await storiesLog();
    const parked = runledger(['audit', 'turn2', '--db', db]);
    expect(parked.stderr).toBe('');
    expect(parked.status).toBe(0);
    expect(parked.stdout).toContain('waits: an earlier turn of its conversation is still open');
    expect(parked.stdout).toMatch(
      /^2026-01-01 00:00:02\.000Z {2}c1 run\.parked +waits: an earlier turn of its conversation is still open \(until 00:00:32, wait 1\)$/m,
    );
    expect(parked.stdout).toMatch(/c1 claim\.answered +the board answered the claim: 409 conversation_busy$/m);
    expect(parked.stdout).toMatch(/c1 run\.claimed +claimed$/m);

    const skipped = await runInProcess(['audit', 'b1', '--db', db]);
    expect(skipped.status).toBe(0);
    expect(skipped.stdout).toMatch(/run\.skipped +skipped: another computer has it$/m);
  });

  it('prints the timeline as JSON with --json', async () => {
    const db = await storiesLog();
    const result = await runInProcess(['audit', 'b1', '--db', db, '--json']);
    expect(result.status).toBe(0);
    const timeline = JSON.parse(result.stdout) as Timeline;
    expect(timeline).toMatchObject({ kind: 'run', id: 'b1', streams: ['c1/lane:B', 'c1/computer:c1'] });
    expect(timeline.entries.map((e) => e.step)).toEqual([
      'frame.received',
      'frame.acknowledged',
      'run.queued',
      'run.claim.started',
      'claim.answered',
      'run.skipped',
    ]);
    expect(timeline.entries.at(-1)).toMatchObject({ owner: 'c1', reason: 'skipped: another computer has it', cause: timeline.entries.at(-2)!.seq });
  });

  it('exits 1 naming an unknown run, and refuses a malformed id or a missing log without creating one', async () => {
    const db = await storiesLog();
    const unknown = runledger(['audit', 'nobody-1', '--db', db]);
    expect(unknown.status).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain('no run or session "nobody-1"');

    const malformed = await runInProcess(['audit', '../../etc/passwd', '--db', db]);
    expect(malformed.status).not.toBe(0);
    expect(malformed.stderr).toContain('"../../etc/passwd" is not a run or session id: ids match ^[A-Za-z0-9-]{1,64}$');

    const missing = `${db}.missing`;
    const none = await runInProcess(['audit', 'b1', '--db', missing]);
    expect(none.status).toBe(1);
    expect(none.stderr).toContain(`there is no log at ${missing}`);
    const { existsSync } = await import('node:fs');
    expect(existsSync(missing)).toBe(false);
  });
});
