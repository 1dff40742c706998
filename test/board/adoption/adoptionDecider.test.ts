import { describe, expect, it } from 'vitest';
import type { AdoptionDecision, AdoptionInput } from '../../../actors/board/adoption/adoptionDecider.ts';
import { adoptionDecider } from '../../../actors/board/adoption/adoptionDecider.ts';
import { initialAdoptionState } from '../../../actors/board/adoption/adoptionState.ts';
import { wordAdoptionReason } from '../../../events/adoptionReasons.ts';
import type { NewEventOf } from '../../../events/catalog.ts';
import { deciderSpec } from '../../support/deciderSpec.ts';
import { T0 } from '../../support/events.ts';

const stream = 'lane:L';
const at = (s: number) => T0 + s * 1000;
const ME = 'box:100';
const SIBLING = 'box:200';
const FAR = 'elsewhere:300';
const TTL = 15 * 60_000;

const input = {
  requested: (s = 0, sessionId = 'S1'): NewEventOf<'adoption.requested'> => ({
    stream,
    type: 'adoption.requested',
    data: { lane: 'L', sessionId },
    at: at(s),
  }),
  released: (s: number): NewEventOf<'adoption.released'> => ({
    stream,
    type: 'adoption.released',
    data: { lane: 'L', reason: 'asked by its user' },
    at: at(s),
  }),
  read: (
    s: number,
    listedOn: string | null,
    over: Partial<{
      lock: string;
      request: number;
      claim: { lock: string; alive: boolean | null } | null;
      error: string | null;
      sessionId: string;
    }> = {},
  ): NewEventOf<'adoption.listing.read'> => ({
    stream,
    type: 'adoption.listing.read',
    data: {
      lane: 'L',
      request: over.request ?? 1,
      sessionId: over.sessionId ?? 'S1',
      lock: over.lock ?? ME,
      listedOn,
      error: over.error ?? null,
      claim: over.claim ?? null,
      ttlMs: TTL,
    },
    at: at(s),
  }),
  bound: (s: number, ok: boolean, over: Partial<{ lock: string; request: number }> = {}): NewEventOf<'adoption.bind.ended'> => ({
    stream,
    type: 'adoption.bind.ended',
    data: {
      lane: 'L',
      request: over.request ?? 1,
      sessionId: 'S1',
      lock: over.lock ?? ME,
      computerId: 'c1',
      ok,
      error: ok ? null : 'tmux: no such pane',
    },
    at: at(s),
  }),
};

const spec = (...given: AdoptionInput[]) => deciderSpec(adoptionDecider, initialAdoptionState('L'), given);
const types = (decisions: readonly AdoptionDecision[] | null) => (decisions === null ? ['(ignored)'] : decisions.map((d) => d.type));
const only = (decisions: readonly AdoptionDecision[] | null) => {
  expect(decisions).toHaveLength(1);
  return decisions![0]!.data;
};
/** The one decision's reason, in the words the audit shows. */
const reasonOf = (decisions: readonly AdoptionDecision[] | null) => wordAdoptionReason(only(decisions).reason);

describe('adoption: a request is claimed before any outside write', () => {
  it('given an open request, when a round reads its session listed, then it claims it with its lock and an expiry one ttl out', () => {
    const decisions = spec(input.requested(0)).when(input.read(5, 'c1'));
    expect(only(decisions)).toMatchObject({ lane: 'L', request: 1, sessionId: 'S1', computerId: 'c1', lock: ME, expires: at(5) + TTL });
    expect(types(decisions)).toEqual(['adoption.claimed']);
  });

  it('given its claim, when the bind succeeded, then the lane adopted the session; when it failed, then the request failed with the reason', () => {
    expect(only(spec(input.requested(0), input.read(5, 'c1')).when(input.bound(6, true)))).toMatchObject({ sessionId: 'S1', computerId: 'c1' });
    expect(types(spec(input.requested(0), input.read(5, 'c1')).when(input.bound(6, true)))).toEqual(['adoption.adopted']);
    const failed = spec(input.requested(0), input.read(5, 'c1')).when(input.bound(6, false));
    expect(types(failed)).toEqual(['adoption.failed']);
    expect(only(failed).reason).toEqual({ code: 'bind.failed', error: 'tmux: no such pane' });
    expect(reasonOf(failed)).toBe('the bind failed: tmux: no such pane');
  });

  it('given a request claimed by a live process, when another round reads it, then it is left (not even recorded)', () => {
    const claimed = [input.requested(0), input.read(5, 'c1', { lock: SIBLING })];
    expect(spec(...claimed).when(input.read(6, 'c1', { claim: { lock: SIBLING, alive: true } }))).toBeNull();
    // A reading that did not probe this claim says nothing about it: the claim holds.
    expect(spec(...claimed).when(input.read(6, 'c1'))).toBeNull();
  });

  it('given a claim whose process died on this host, when a round reads it, then it is open again at once and claimed anew', () => {
    const decisions = spec(input.requested(0), input.read(5, 'c1', { lock: SIBLING })).when(
      input.read(6, 'c1', { claim: { lock: SIBLING, alive: false } }),
    );
    expect(only(decisions)).toMatchObject({ lock: ME, expires: at(6) + TTL });
    expect(reasonOf(decisions)).toContain(`after the claim of ${SIBLING} lapsed`);
  });

  it('given a claim from another host, when read before its expiry, then it holds; at its expiry, then it is open', () => {
    const claimed = [input.requested(0), input.read(5, 'c1', { lock: FAR })];
    expect(spec(...claimed).when(input.read(5 + TTL / 1000 - 1, 'c1', { claim: { lock: FAR, alive: null } }))).toBeNull();
    expect(types(spec(...claimed).when(input.read(5 + TTL / 1000, 'c1', { claim: { lock: FAR, alive: null } })))).toEqual(['adoption.claimed']);
  });

  it('given a claim superseded (released, or asked again) before its bind ended, when the bind ends, then it is recorded but answers nothing', () => {
    expect(spec(input.requested(0), input.read(5, 'c1'), input.released(6)).when(input.bound(7, true))).toEqual([]);
    expect(spec(input.requested(0), input.read(5, 'c1'), input.requested(6, 'S2')).when(input.bound(7, true))).toEqual([]);
    // Another round's claim of the same request (this one's lapsed) is not this round's to answer.
    expect(
      spec(input.requested(0), input.read(5, 'c1', { lock: SIBLING }), input.read(6, 'c1', { claim: { lock: SIBLING, alive: false } })).when(
        input.bound(7, true, { lock: SIBLING }),
      ),
    ).toEqual([]);
  });
});

describe("adoption: a request is open while it is the lane's latest answer", () => {
  it('given a request answered (adopted, failed or released), when a round reads it, then nothing is decided', () => {
    expect(spec(input.requested(0), input.read(5, 'c1'), input.bound(6, true)).when(input.read(7, 'c1'))).toBeNull();
    expect(spec(input.requested(0), input.read(5, 'c1'), input.bound(6, false)).when(input.read(7, 'c1'))).toBeNull();
    expect(spec(input.requested(0), input.released(1)).when(input.read(7, 'c1'))).toBeNull();
  });

  it('given a request asked again after an answer, when a round reads the new one, then it is claimed; a reading of the old one is not', () => {
    const given = [input.requested(0), input.read(5, 'c1'), input.bound(6, true), input.requested(10, 'S2')];
    expect(spec(...given).when(input.read(11, 'c2', { request: 1 }))).toBeNull();
    expect(only(spec(...given).when(input.read(11, 'c2', { request: 2, sessionId: 'S2' })))).toMatchObject({
      request: 2,
      sessionId: 'S2',
      computerId: 'c2',
    });
  });
});

describe('adoption: a session not yet listed waits up to 180 s, then fails', () => {
  it('given a request, when its session is not listed within the window, then the wait is said once and later readings are not recorded', () => {
    const waiting = spec(input.requested(0));
    const said = waiting.when(input.read(10, null));
    expect(types(said)).toEqual(['adoption.waiting']);
    expect(only(said)).toMatchObject({ until: at(180) });
    expect(reasonOf(said)).toBe('session S1 is not listed on any computer: it waits up to 180 s from the request');
    expect(waiting.when(input.read(20, null))).toBeNull();
    expect(waiting.when(input.read(179, null, { error: 'tmux: server busy' }))).toBeNull();
  });

  it('given a waiting request, when it is listed before 180 s, then it is claimed', () => {
    expect(types(spec(input.requested(0), input.read(10, null)).when(input.read(170, 'c1')))).toEqual(['adoption.claimed']);
  });

  it('given a request, when its session is still not listed at 180 s, then it fails with the reason', () => {
    const failed = spec(input.requested(0), input.read(10, null)).when(input.read(180, null));
    expect(types(failed)).toEqual(['adoption.failed']);
    expect(reasonOf(failed)).toBe('session S1 is not listed on any computer, 180 s after the request');
    const unreadable = spec(input.requested(0)).when(input.read(200, null, { error: 'tmux: server busy' }));
    expect(reasonOf(unreadable)).toBe('the session listing could not be read (tmux: server busy), 200 s after the request');
  });
});
