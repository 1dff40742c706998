import type { Decider } from '../runtime/decider.ts';
import { type BoardState, initialBoardState, isConnected } from './boardState.ts';
import { decideBoard, marksRunning } from './decideBoard.ts';
import { evolveBoard } from './evolveBoard.ts';

const INPUTS = new Set([
  'board.run.submitted',
  'board.computer.added',
  'board.computer.connected',
  'board.computer.disconnected',
  'board.claim.requested',
  'board.heartbeat.lapsed',
  'board.cancel.requested',
  'board.run.started',
  'board.reply.received',
  'board.completion.received',
  'board.offer.declined',
]);

/** One board per log file: every board event folds into this one scope. */
export const BOARD_SCOPE = 'board';

/**
 * The board (SPEC section 7): takes runs in, offers them to computers, grants each claim to exactly
 * one computer, serialises a lane's turns, reaps lapsed leases, takes cancels and completions. Its
 * streams carry no owner prefix (`run:<id>`, `computer:<id>`); `c1/run:<id>` is a computer's.
 */
export const boardDecider: Decider<BoardState> = {
  name: 'board',
  scopeOf(event) {
    // An adoption (decided by the adoption decider in the lane's stream) moves the lane to the
    // computer its session lives on: the board folds it, as it decides where the lane's runs go.
    if (!event.type.startsWith('board.') && event.type !== 'adoption.adopted') return null;
    // The board's own streams have no owner; read in place, as a replay asks this of every event.
    const { stream } = event;
    if (stream.indexOf('/') !== -1) return null;
    const mine = stream.startsWith('run:') || stream.startsWith('lane:') || stream.startsWith('computer:') || stream.startsWith('board:');
    return mine ? BOARD_SCOPE : null;
  },
  isInput: (event) => INPUTS.has(event.type),
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
        return !isConnected(state, input.data.computerId);
      case 'board.offer.declined':
        // A decline that changes nothing (the computer already drains, nobody new to offer the run to) is not recorded.
        return decideBoard(state, input).length === 0;
      default:
        return false;
    }
  },
  evolve: evolveBoard,
};
