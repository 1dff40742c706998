import { exhausted } from '../../events/exhaustive.ts';
import { decider } from '../decider.ts';
import { type BoardState, closedElsewhere, initialBoardState, isConnected } from './boardState.ts';
import { BOARD_INPUTS, type BoardDecision, type BoardInput, decideBoard, marksRunning, quietRefusal, raced } from './decideBoard.ts';
import { evolveBoard } from './evolveBoard.ts';
import { pastRecall } from './pastRecall.ts';

/** One board per log file: every board event folds into this one scope. */
export const BOARD_SCOPE = 'board';
/** The kinds of the board's own streams (no owner prefix): every event of them folds into its state. */
export const BOARD_STREAM_KINDS = ['run', 'lane', 'computer', 'board'] as const;
const BOARD_STREAM_PREFIXES = BOARD_STREAM_KINDS.map((kind) => `${kind}:`);

/**
 * The board (docs/rules.md#wire-and-cli): takes runs in, offers them to computers, grants each claim to exactly
 * one computer, serialises a lane's turns, reaps lapsed leases, takes cancels and completions. Its
 * streams carry no owner prefix (`run:<id>`, `computer:<id>`); `c1/run:<id>` is a computer's.
 */
export const boardDecider = decider<BoardState, BoardInput, BoardDecision>({
  name: 'board',
  inputs: BOARD_INPUTS,
  scopeOf(event) {
    // An adoption (decided by the adoption decider in the lane's stream) moves the lane to the
    // computer its session lives on: the board folds it, as it decides where the lane's runs go.
    if (!event.type.startsWith('board.') && event.type !== 'adoption.adopted') return null;
    // The board's own streams have no owner; read in place, as a replay asks this of every event.
    const { stream } = event;
    if (stream.indexOf('/') !== -1) return null;
    const mine = BOARD_STREAM_PREFIXES.some((prefix) => stream.startsWith(prefix));
    return mine ? BOARD_SCOPE : null;
  },
  initialState: initialBoardState,
  decide: decideBoard,
  ignores(state, input) {
    switch (input.type) {
      case 'board.heartbeat.lapsed':
        // Late (the run ended meanwhile) or twice: only an open claim is reaped.
        return !state.open[input.data.runId];
      case 'board.run.started':
        return !marksRunning(state, input.data.runId, input.data.computerId);
      case 'board.computer.disconnected':
        return !isConnected(state, input.data.computerId) || closedElsewhere(state, input.data.computerId, input.data.board);
      case 'board.offer.stale':
      case 'board.offer.declined':
        // A stale offer of a run claimed meanwhile, a decline that changes nothing (the computer already drains, nobody new to offer the run to) is not recorded.
        return decideBoard(state, input).length === 0;
      case 'board.claim.requested':
        // A claim that lost is answered without being recorded (`unrecorded`); see `quietRefusal`.
        return raced(state, input) || quietRefusal(state, input) !== null;
      case 'board.cancel.requested':
      case 'board.reply.received':
      case 'board.completion.received':
        // Answered, if only by a refusal, unless the run settled after the host looked (see `raced`).
        return raced(state, input);
      case 'board.run.submitted':
      case 'board.computer.added':
      case 'board.computer.connected':
        // A request is always answered, if only by a refusal.
        return false;
      default:
        return exhausted(input, false);
    }
  },
  unrecorded: (state, input) => (input.type === 'board.claim.requested' ? (quietRefusal(state, input) ?? []) : []),
  evolve: evolveBoard,
  recall: pastRecall,
});
