import { describe, expect, it, vi } from 'vitest';
import { claimVerdict, errorCodeOf } from '../../actors/lane/claimAnswer.ts';
import { CONFLICT_RETRIES } from '../../runtime/actors/retryOnConflict.ts';
import { type OpenedLog, StaleVersionError } from '../../runtime/store/eventStore.ts';
import type { SqliteEventStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { liveBoard, SUBMIT } from '../board/host/liveBoard.ts';

/**
 * The real store, except that each submission's append is refused as stale while `contended` holds:
 * what a board sees when other boards on its log keep committing first (docs/rules.md#postgresql-board), with nothing written.
 */
function contendedStore(log: SqliteEventStore, state: { contended: boolean; refusals: number }): OpenedLog {
  const store = Object.create(log) as SqliteEventStore;
  store.append = (request) => {
    if (!state.contended || !request.events.some((e) => e.type === 'board.run.submitted')) return log.append(request);
    state.refusals++;
    request.chain?.chain.breakAt(request.chain.link);
    return Promise.resolve({ ok: false, conflict: new StaleVersionError(request.events[0]!.stream, 0, 1) });
  };
  return store;
}

describe('a request whose conflicts outlast the retries (boards that keep committing first)', () => {
  it('is answered 503 log_contended with a Retry-After, as no bug of the board, and taken once the log is quieter', async () => {
    const state = { contended: true, refusals: 0 };
    const board = await liveBoard([], { wrap: (log) => contendedStore(log, state) });
    const submit = () =>
      fetch(`${board.url}/v1/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${SUBMIT}`, 'content-type': 'application/json' },
        body: JSON.stringify({ lane: 'L', prompt: 'p' }),
      });
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);

    const refused = await submit();
    const body = await refused.json();
    state.contended = false;
    const accepted = await submit();

    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(body).toEqual({
      detail: { error: 'log_contended', message: 'other writers kept changing what this request decides on; nothing was recorded: try again' },
    });
    // Decided CONFLICT_RETRIES + 1 times, then answered: the client retries, not the board.
    expect(state.refusals).toBe(CONFLICT_RETRIES + 1);
    expect(accepted.status).toBe(201);
    expect((await board.log()).filter((e) => e.type === 'board.run.submitted')).toHaveLength(1);
    expect(warnings).not.toHaveBeenCalled();
  });

  it('is one a computer retries (docs/rules.md#wire-and-cli: any 5xx), for a claim as for a completion', () => {
    const answer = { detail: { error: 'log_contended', message: '…' } };
    expect(claimVerdict(503, errorCodeOf(answer))).toEqual({ kind: 'retry' });
  });
});
