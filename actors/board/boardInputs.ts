import type { EventData, NewEventOf } from '../../events/catalog.ts';
import type { Usage } from '../../events/usage.ts';
import type { ChangeSummary, RepoAnnouncement } from '../../events/workspace.ts';
import type { RunPast } from './settledRun.ts';

/** What the host read of the run first (see RunPastSchema); left out by callers that name no past (tests, older paths). */
const pastField = (past: RunPast | undefined) => (past === undefined ? {} : { past });

/**
 * The board's inputs as the server records them, each in its stream: a run's requests in
 * `run:<id>`, a computer's in `computer:<id>`. `at` is the server's clock when the request came.
 */
export const boardInput = {
  submitted: (data: Omit<EventData<'board.run.submitted'>, 'bodyChecked'>, at: number): NewEventOf<'board.run.submitted'> => ({
    stream: `run:${data.runId}`,
    type: 'board.run.submitted',
    data: { ...data, bodyChecked: true, oneOffer: true },
    at,
  }),
  computerAdded: (computerId: string, tokenHash: string, at: number): NewEventOf<'board.computer.added'> => ({
    stream: `computer:${computerId}`,
    type: 'board.computer.added',
    data: { computerId, tokenHash },
    at,
  }),
  /**
   * `board`: the board whose push hub holds the stream (its log writer). `life`: the daemon's incarnation on
   * it (null: none sent), and `over`, the board the log had the computer on whose hold this board found lapsed.
   * `repos`: the repositories it announced on the stream (none from an older computer).
   */
  connected: (
    computerId: string,
    at: number,
    board?: string,
    life?: { incarnation: string | null; over?: string },
    repos?: RepoAnnouncement,
  ): NewEventOf<'board.computer.connected'> => ({
    stream: `computer:${computerId}`,
    type: 'board.computer.connected',
    data: {
      computerId,
      pushedFromState: true,
      ...(board === undefined ? {} : { board }),
      ...(life === undefined ? {} : { incarnation: life.incarnation }),
      ...(life?.over === undefined ? {} : { over: life.over }),
      oneOffer: true,
      ...(repos === undefined ? {} : { repos }),
    },
    at,
  }),
  /** `board`: the board whose stream closed; none when any connection is to end (a board's start closing the stale ones). */
  disconnected: (computerId: string, at: number, lastSeenAt?: number, board?: string): NewEventOf<'board.computer.disconnected'> => ({
    stream: `computer:${computerId}`,
    type: 'board.computer.disconnected',
    data: { computerId, ...(lastSeenAt === undefined ? {} : { lastSeenAt }), ...(board === undefined ? {} : { board }), oneOffer: true },
    at,
  }),
  claim: (runId: string, computerId: string, at: number, incarnation?: string, past?: RunPast): NewEventOf<'board.claim.requested'> => ({
    stream: `run:${runId}`,
    type: 'board.claim.requested',
    data: { runId, computerId, ...(incarnation === undefined ? {} : { incarnation }), ...pastField(past), bound: true, oneOffer: true },
    at,
  }),
  /** `reason`: how it passed the offer (docs/rules.md#dispatch). */
  declined: (
    runId: string,
    computerId: string,
    at: number,
    reason: EventData<'board.offer.declined'>['reason'] = 'draining',
  ): NewEventOf<'board.offer.declined'> => ({
    stream: `run:${runId}`,
    type: 'board.offer.declined',
    data: { runId, computerId, reason, oneOffer: true },
    at,
  }),
  stale: (runId: string, unclaimedSince: number, at: number): NewEventOf<'board.offer.stale'> => ({
    stream: `run:${runId}`,
    type: 'board.offer.stale',
    data: { runId, unclaimedSince, oneOffer: true },
    at,
  }),
  lapsed: (runId: string, lastHeartbeatAt: number, at: number): NewEventOf<'board.heartbeat.lapsed'> => ({
    stream: `run:${runId}`,
    type: 'board.heartbeat.lapsed',
    data: { runId, lastHeartbeatAt, oneOffer: true },
    at,
  }),
  cancel: (runId: string, at: number, past?: RunPast): NewEventOf<'board.cancel.requested'> => ({
    stream: `run:${runId}`,
    type: 'board.cancel.requested',
    data: { runId, pushed: true, ...pastField(past) },
    at,
  }),
  started: (runId: string, computerId: string, at: number): NewEventOf<'board.run.started'> => ({
    stream: `run:${runId}`,
    type: 'board.run.started',
    data: { runId, computerId },
    at,
  }),
  reply: (runId: string, computerId: string, text: string, at: number, past?: RunPast): NewEventOf<'board.reply.received'> => ({
    stream: `run:${runId}`,
    type: 'board.reply.received',
    data: { runId, computerId, text, ...pastField(past) },
    at,
  }),
  completion: (
    runId: string,
    computerId: string,
    ok: boolean,
    error: string | undefined,
    at: number,
    usage?: Usage,
    past?: RunPast,
    changes?: ChangeSummary,
  ): NewEventOf<'board.completion.received'> => ({
    stream: `run:${runId}`,
    type: 'board.completion.received',
    data: {
      runId,
      computerId,
      ok,
      ...(error === undefined ? {} : { error }),
      ...(usage === undefined ? {} : { usage }),
      ...pastField(past),
      ...(changes === undefined ? {} : { changes }),
      oneOffer: true,
    },
    at,
  }),
};
