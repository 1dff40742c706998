import { describe, expect, it } from 'vitest';
import type { SessionDecision, SessionInput } from '../../actors/session/decideSession.ts';
import { sessionDecider } from '../../actors/session/sessionDecider.ts';
import { initialSessionClose } from '../../actors/session/sessionState.ts';
import type { NewEventOf } from '../../events/catalog.ts';
import type { Activity } from '../../events/sessionEvents.ts';
import { type RecordedSessionReason, wordSessionReason } from '../../events/sessionReasons.ts';
import { deciderSpec, decisionOf } from '../support/deciderSpec.ts';
import { T0 } from '../support/events.ts';

const stream = 'c1/session:S1';
const at = (s: number) => T0 + s * 1000;
const ME = 'box:100';
const SIBLING = 'box:200';
const FAR = 'elsewhere:300';
const TTL = 15 * 60_000;
/** quiet 120 s, tick 10 s: gap = max(30 s, 60 s). */
const SETTINGS = { quietMs: 120_000, gapMs: 60_000, launchWindowMs: 180_000 };

const activity = {
  idle: (): Activity => ({ presence: 'running', turn: 'idle', mark: null, target: 'tmux:%1', seen: 'pane %1 runs claude' }),
  working: (): Activity => ({ presence: 'running', turn: 'working', mark: null, target: 'tmux:%1', seen: 'pane %1 runs claude' }),
  needsInput: (): Activity => ({ presence: 'running', turn: 'needs_input', mark: null, target: 'tmux:%1', seen: 'pane %1 runs claude' }),
  unknown: (mark: number | null): Activity => ({ presence: 'running', turn: 'unknown', mark, target: 'tmux:%1', seen: 'pane %1 runs node' }),
  noAgent: (): Activity => ({ presence: 'stopped', turn: 'unknown', mark: null, target: 'tmux:%1', seen: 'pane %1 runs bash, no agent' }),
  gone: (): Activity => ({ presence: 'gone', turn: 'unknown', mark: null, target: null, seen: 'no tmux pane of it is open' }),
};

const input = {
  ended: (
    s = 0,
    over: Partial<{ runId: string; bound: boolean; launchedAt: number | null; pid: number | null }> = {},
  ): NewEventOf<'session.run.ended'> => ({
    stream,
    type: 'session.run.ended',
    data: {
      sessionId: 'S1',
      runId: over.runId ?? 'r1',
      lane: 'L',
      bound: over.bound ?? true,
      launchedAt: over.launchedAt ?? null,
      pid: over.pid ?? null,
    },
    at: at(s),
  }),
  due: (s: number, lock = ME, holder: { lock: string; alive: boolean | null } | null = null): NewEventOf<'session.close.due'> => ({
    stream,
    type: 'session.close.due',
    data: { sessionId: 'S1', lock, ttlMs: TTL, holder },
    at: at(s),
  }),
  read: (s: number, reading: Activity | null, lock = ME, failure: string | null = null): NewEventOf<'session.read'> => ({
    stream,
    type: 'session.read',
    data: { sessionId: 'S1', lock, activity: reading, failure: reading === null ? (failure ?? 'tmux timed out') : null, settings: SETTINGS },
    at: at(s),
  }),
  answered: (
    s: number,
    attempt: number,
    ok: boolean,
    detail = ok ? 'pane %1 killed' : 'tmux: permission denied',
  ): NewEventOf<'session.kill.answered'> => ({
    stream,
    type: 'session.kill.answered',
    data: { sessionId: 'S1', attempt, ok, detail },
    at: at(s),
  }),
};

const spec = (...given: SessionInput[]) => deciderSpec(sessionDecider, initialSessionClose(), given);
const types = (decisions: readonly SessionDecision[] | null) => (decisions === null ? ['(ignored)'] : decisions.map((d) => d.type));
/** A decision's data, its reason in the words the audit shows. */
const worded = <D extends { reason: RecordedSessionReason }>(data: D) => ({ ...data, reason: wordSessionReason(data.reason) });
const only = (decisions: readonly SessionDecision[] | null) => {
  expect(decisions).toHaveLength(1);
  return worded(decisions![0]!.data);
};
/** The one decision, a deferral: its data, with the unread watch it keeps. */
const deferred = (decisions: readonly SessionDecision[] | null) => {
  expect(types(decisions)).toEqual(['session.close.deferred']);
  return worded(decisionOf(decisions, 'session.close.deferred').data);
};
/** A close intended at 0 s and claimed by this process at 1 s. */
const claimed = (...more: SessionInput[]) => spec(input.ended(0), input.due(1), ...more);

describe('the close intent', () => {
  it('given a run that ended in the session, then its close is intended; the same run again is ignored', () => {
    const s = spec();
    expect(only(s.when(input.ended(0)))).toMatchObject({ sessionId: 'S1', runId: 'r1' });
    expect(s.state.open).toBe(true);
    expect(types(s.when(input.ended(5)))).toEqual(['(ignored)']);
  });

  it('given a closed session resumed and ended again, then a new close is intended from scratch', () => {
    const s = claimed(input.read(2, activity.gone()));
    expect(s.state).toMatchObject({ open: false, attempts: 1 });
    expect(types(s.when(input.ended(100, { runId: 'r2' })))).toEqual(['session.close.intended']);
    expect(s.state).toMatchObject({ open: true, runId: 'r2', attempts: 0, claim: null, confirmedAt: null });
  });
});

describe('claims', () => {
  it('given an open close, then a round claims it with its lock and an expiry one ttl out, before anything is read', () => {
    expect(only(spec(input.ended(0)).when(input.due(1)))).toMatchObject({ lock: ME, expires: at(1) + TTL });
  });

  it('given a claim of another live process on this host, then a round records nothing', () => {
    const s = claimed();
    expect(types(s.when(input.due(2, SIBLING, { lock: ME, alive: true })))).toEqual(['(ignored)']);
    expect(types(s.when(input.read(3, activity.idle(), SIBLING)))).toEqual(['(ignored)']);
  });

  it('given a claim whose process died on this host, then it is open at once', () => {
    const s = claimed();
    expect(only(s.when(input.due(2, SIBLING, { lock: ME, alive: false })))).toMatchObject({ lock: SIBLING, expires: at(2) + TTL });
    // The dead claimant's reading, should it come, is not its to record any more.
    expect(types(s.when(input.read(3, activity.idle(), ME)))).toEqual(['(ignored)']);
  });

  it('given a claim from another host, then it holds until it expires, whatever its process', () => {
    const s = claimed();
    expect(types(s.when(input.due(600, FAR, { lock: ME, alive: null })))).toEqual(['(ignored)']);
    expect(types(s.when(input.due(1 + TTL / 1000 - 1, FAR, { lock: ME, alive: null })))).toEqual(['(ignored)']);
    expect(only(s.when(input.due(1 + TTL / 1000, FAR, { lock: ME, alive: null })))).toMatchObject({ lock: FAR });
  });

  it('given its own claim with more than a minute left, then a process reuses it; with a minute or less, it claims again', () => {
    const s = claimed(input.read(2, activity.working()));
    expect(types(s.when(input.due(12)))).toEqual(['(ignored)']);
    expect(types(s.when(input.read(13, activity.working())))).toEqual(['session.close.deferred']);
    expect(types(s.when(input.due(1 + TTL / 1000 - 61)))).toEqual(['(ignored)']);
    expect(only(s.when(input.due(1 + TTL / 1000 - 60)))).toMatchObject({ lock: ME, expires: at(1 + TTL / 1000 - 60) + TTL });
  });

  it('given two rounds that read one open close, then only the one whose claim committed goes on, and the other records nothing', () => {
    // Both built their input from the state before any claim; the loser's append was refused, and
    // decided again on the state the winner left, it is nothing.
    const s = spec(input.ended(0));
    expect(types(s.when(input.due(1, ME)))).toEqual(['session.close.claimed']);
    expect(types(s.when(input.due(1, SIBLING, { lock: ME, alive: true })))).toEqual(['(ignored)']);
    expect(types(s.when(input.read(2, activity.gone(), SIBLING)))).toEqual(['(ignored)']);
    expect(s.state.claim?.lock).toBe(ME);
  });

  it('given its own kill under way, then its rounds leave it to the outbox until the claim runs out; then the session is read again', () => {
    const s = claimed(input.read(2, activity.idle()));
    expect(s.state.killing).toMatchObject({ attempt: 1, target: 'tmux:%1' });
    expect(types(s.when(input.due(1 + TTL / 1000 - 30)))).toEqual(['(ignored)']);
    expect(types(s.when(input.due(1 + TTL / 1000, SIBLING, { lock: ME, alive: true })))).toEqual(['session.close.claimed']);
    expect(s.state.killing).toBeNull();
  });
});

describe('the reading, last, just before the kill', () => {
  it('given it reads idle, then the close goes ahead: a kill of what was read', () => {
    expect(only(claimed().when(input.read(2, activity.idle())))).toMatchObject({ attempt: 1, target: 'tmux:%1' });
  });

  it('given no agent in the pane, then it is closed without waiting', () => {
    expect(types(claimed().when(input.read(2, activity.noAgent())))).toEqual(['session.kill.requested']);
  });

  it('given nothing of it is left, then it is confirmed closed with nothing to stop', () => {
    const s = claimed();
    expect(types(s.when(input.read(2, activity.gone())))).toEqual(['session.closed']);
    expect(s.state).toMatchObject({ open: false, claim: null, confirmedAt: at(2) });
  });

  it('given a turn in progress, then the close is deferred with the reason, every round for as long as it reads so', () => {
    const s = claimed();
    const first = only(s.when(input.read(2, activity.working())));
    expect(first.reason).toMatch(/in a turn \(working\).*closes once the turn ends/);
    expect(only(s.when(input.read(12, activity.needsInput())))).toMatchObject({ attempt: 2, reason: expect.stringContaining('needs_input') });
    expect(types(s.when(input.read(22, activity.idle())))).toEqual(['session.kill.requested']);
  });

  it('given the session could not be read, then the close waits and is read again next round', () => {
    const s = claimed();
    expect(only(s.when(input.read(2, null, ME, 'tmux: server exited unexpectedly'))).reason).toMatch(
      /could not be read just now \(tmux: server exited unexpectedly\)/,
    );
    expect(s.state.open).toBe(true);
    expect(types(s.when(input.read(12, activity.gone())))).toEqual(['session.closed']);
  });
});

describe('the unread watch (a turn the agent does not publish)', () => {
  it('given the record unwritten through quiet, read every tick, then it closes once seen − since ≥ quiet', () => {
    const s = claimed();
    const mark = at(-30);
    let last: readonly SessionDecision[] | null = null;
    for (let t = 10; t < 130; t += 10) {
      last = s.when(input.read(t, activity.unknown(mark)));
      expect(types(last)).toEqual(['session.close.deferred']);
    }
    expect(deferred(last).unread).toEqual({ since: at(10), mark, seen: at(120) });
    expect(only(s.when(input.read(130, activity.unknown(mark)))).reason).toMatch(/nothing was written to its record in 120 s watched/);
  });

  it('given the record written again, then the watch starts again at that reading', () => {
    const s = claimed();
    for (let t = 10; t <= 100; t += 10) s.when(input.read(t, activity.unknown(at(0))));
    const restarted = deferred(s.when(input.read(110, activity.unknown(at(105)))));
    expect(restarted.unread).toEqual({ since: at(110), mark: at(105), seen: at(110) });
    expect(restarted.reason).toMatch(/its record was written: the watch starts again/);
    for (let t = 120; t < 230; t += 10) expect(types(s.when(input.read(t, activity.unknown(at(105)))))).toEqual(['session.close.deferred']);
    expect(types(s.when(input.read(230, activity.unknown(at(105)))))).toEqual(['session.kill.requested']);
  });

  it('given readings further apart than gap, then the watch starts again: a round that slept watched nothing', () => {
    const s = claimed();
    s.when(input.read(10, activity.unknown(at(0))));
    s.when(input.read(60, activity.unknown(at(0))));
    // 61 s after the last reading: more than gap (60 s), though quiet has passed since the first.
    const restarted = deferred(s.when(input.read(131, activity.unknown(at(0)))));
    expect(restarted.unread).toEqual({ since: at(131), mark: at(0), seen: at(131) });
    expect(restarted.reason).toMatch(/too long ago: the watch starts again/);
    // Exactly gap apart still counts as watched.
    expect(types(s.when(input.read(191, activity.unknown(at(0)))))).toEqual(['session.close.deferred']);
    expect(types(s.when(input.read(251, activity.unknown(at(0)))))).toEqual(['session.kill.requested']);
  });

  it('given no mark to count from, then it waits and says so, keeping no watch', () => {
    const s = claimed();
    const waits = deferred(s.when(input.read(10, activity.unknown(null))));
    expect(waits.reason).toMatch(/shows no write to count from: it waits/);
    expect(waits.unread).toBeNull();
    for (let t = 20; t < 600; t += 100) expect(types(s.when(input.read(t, activity.unknown(null))))).toEqual(['session.close.deferred']);
  });

  it('given a turn read in progress, then the watch ends: it starts afresh when the turn is unpublished again', () => {
    const s = claimed();
    for (let t = 10; t <= 100; t += 10) s.when(input.read(t, activity.unknown(at(0))));
    expect(deferred(s.when(input.read(110, activity.working()))).unread).toBeNull();
    expect(deferred(s.when(input.read(120, activity.unknown(at(0))))).unread).toEqual({ since: at(120), mark: at(0), seen: at(120) });
  });
});

describe('a launch never bound to a session', () => {
  const launch = (...more: SessionInput[]) => spec(input.ended(0, { bound: false, launchedAt: at(-100), pid: 4242 }), input.due(1), ...more);

  it('given it is within its launch window, then it waits like any session that publishes no turn', () => {
    expect(types(launch().when(input.read(10, activity.unknown(null))))).toEqual(['session.close.deferred']);
  });

  it('given its launch window has passed, then it closes without waiting', () => {
    expect(only(launch().when(input.read(80, activity.unknown(null)))).reason).toMatch(/never bound to a session, past its launch window of 180 s/);
  });

  it('given a turn read in progress, then even past its window it is not cut', () => {
    expect(types(launch().when(input.read(200, activity.working())))).toEqual(['session.close.deferred']);
  });
});

describe('the outcome', () => {
  it('given the kill answered, then the close is confirmed', () => {
    const s = claimed(input.read(2, activity.idle()));
    expect(only(s.when(input.answered(3, 1, true))).reason).toMatch(/stopped \(pane %1 killed\); its id is kept/);
    expect(s.state).toMatchObject({ open: false, confirmedAt: at(3), killing: null });
  });

  it('given the kill failed, then it fails for good: one incident, and no round tries it again', () => {
    const s = claimed(input.read(2, activity.idle()));
    expect(types(s.when(input.answered(3, 1, false)))).toEqual(['session.close.incident']);
    expect(s.state).toMatchObject({
      open: false,
      failedAt: at(3),
      failure: { code: 'unstoppable', detail: expect.stringContaining('permission denied') },
    });
    expect(types(s.when(input.answered(4, 1, false)))).toEqual(['(ignored)']);
    expect(types(s.when(input.due(20)))).toEqual(['(ignored)']);
    expect(types(s.when(input.read(21, activity.idle())))).toEqual(['(ignored)']);
  });

  it('given a close confirmed meanwhile, then a late failure does not undo it', () => {
    // This process decided a kill and its claim ran out under it; a sibling read the pane gone and confirmed.
    const s = claimed(
      input.read(2, activity.idle()),
      input.due(1 + TTL / 1000, SIBLING, { lock: ME, alive: true }),
      input.read(1 + TTL / 1000 + 1, activity.gone(), SIBLING),
    );
    expect(s.state).toMatchObject({ open: false, attempts: 2 });
    expect(types(s.when(input.answered(1 + TTL / 1000 + 2, 1, false)))).toEqual(['(ignored)']);
    expect(types(s.when(input.read(1 + TTL / 1000 + 3, null, ME)))).toEqual(['(ignored)']);
    expect(s.state.confirmedAt).toBe(at(1 + TTL / 1000 + 1));
  });
});
