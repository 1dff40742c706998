import { describe, expect, it } from 'vitest';
import { OFFER_ACK_MS } from '../../../adapters/push/pushHub.ts';
import { OFFER_AGAIN_MS } from '../../../apps/board/offerMonitor.ts';
import { FakeClock } from '../../../runtime/actors/clock.ts';
import { liveBoard, ofType, openStream, type Stream, until } from './liveBoard.ts';

describe('the push stream: one offer at a time (docs/rules.md#dispatch)', () => {
  it('a run goes to one computer; left unanswered it goes to the next, refused to the next again; the claim withdraws it from the others, and their late claims cost no row', async () => {
    const clock = new FakeClock();
    const board = await liveBoard(['c1', 'c2', 'c3'], { clock });
    const streams: Record<string, Stream> = {
      c1: openStream(board, 'c1', 'l1'),
      c2: openStream(board, 'c2', 'l2'),
      c3: openStream(board, 'c3', 'l3'),
    };
    await Promise.all(Object.values(streams).map((s) => s.opened));
    await until(async () => (await board.server.board.actor.read((s) => s.connected.length)) === 3, 'all three online');
    const runId = await board.submit('A');
    const holders = () => Object.keys(streams).filter((c) => streams[c]!.frames.some((f) => f.kind === 'run.requested' && f.data.run_id === runId));
    await until(() => holders().length === 1, 'the run on one computer');
    const [first] = holders();

    // No ack: once OFFER_ACK_MS passed, it goes to a second computer, and only to it.
    for (let t = 0; t <= OFFER_ACK_MS; t += 1_000) clock.advance(1_000);
    await until(() => holders().length === 2, 'the run on a second computer');
    const second = holders().find((c) => c !== first)!;
    // The second refuses it (a 400 ack): it goes to the third.
    const frame = streams[second]!.frames.find((f) => f.data.run_id === runId)!;
    streams[second]!.ws.send(JSON.stringify({ ack: frame.id, status: 400, reason: 'refused' }));
    await until(() => holders().length === 3, 'the run on the third computer');
    const third = holders().find((c) => c !== first && c !== second)!;

    const claim = (c: string, life: string) =>
      board.call('POST', `/v1/computers/${c}/runs/${runId}/claim`, { token: board.tokens[c], body: {}, headers: { 'runledger-incarnation': life } });
    expect((await claim(third, `l${third.slice(1)}`)).status).toBe(200);
    for (const other of [first!, second]) {
      await until(() => streams[other]!.frames.find((f) => f.kind === 'run.withdrawn' && f.data.run_id === runId), `withdrawn from ${other}`);
      expect((await claim(other, `l${other.slice(1)}`)).body).toMatchObject({ detail: { error: 'claimed_elsewhere' } });
    }
    const log = await board.log();
    expect(ofType(log, 'board.claim.requested')).toHaveLength(1);
    expect(ofType(log, 'board.request.refused')).toHaveLength(0);
    expect(ofType(log, 'board.offer.declined').map((e) => (e.data as { reason: string }).reason)).toEqual(['unanswered', 'refused']);
  });

  it('a computer that acks its offer (202) and never claims it loses it to another computer once the offer monitor finds it stale, and only then', async () => {
    const clock = new FakeClock();
    const board = await liveBoard(['c1', 'c2'], { clock });
    const streams: Record<string, Stream> = { c1: openStream(board, 'c1', 'l1'), c2: openStream(board, 'c2', 'l2') };
    await Promise.all(Object.values(streams).map((s) => s.opened));
    await until(async () => (await board.server.board.actor.read((s) => s.connected.length)) === 2, 'both online');
    const runId = await board.submit('A');
    const holders = () => Object.keys(streams).filter((c) => streams[c]!.frames.some((f) => f.kind === 'run.requested' && f.data.run_id === runId));
    await until(() => holders().length === 1, 'the run on one computer');
    const [stuck] = holders();
    const frame = streams[stuck!]!.frames.find((f) => f.data.run_id === runId)!;
    streams[stuck!]!.ws.send(JSON.stringify({ ack: frame.id, status: 202, reason: 'queued' }));
    const tick = async (ms: number) => {
      for (let t = 0; t < ms; t += 1_000) {
        clock.advance(1_000);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    };
    // Acked: no pass after OFFER_ACK_MS, it stays where it is while the monitor's bound runs.
    await tick(OFFER_AGAIN_MS - 10_000);
    expect(holders()).toEqual([stuck]);
    await tick(20_000);
    await until(() => holders().length === 2, 'the run on the other computer');
    const log = await board.log();
    expect(ofType(log, 'board.offer.stale')).toHaveLength(1);
    expect(ofType(log, 'board.offer.declined')).toHaveLength(0);
  });
});
