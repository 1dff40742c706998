import { resolve } from 'node:path';
import { ADOPTION_LISTING_WINDOW_MS } from '../../actors/board/adoption/adoptionState.ts';
import { releaseAdoption, requestAdoption } from '../../apps/board/chores/adoptions/adoptionRequests.ts';
import { boardLockPath, lockHolder } from '../../apps/computer/processLock.ts';
import { isSafeId, SAFE_ID_RULE } from '../../events/idRule.ts';
import { systemClock } from '../../runtime/actors/clock.ts';
import { isPostgresUrl } from '../../runtime/store/logLocation.ts';
import type { AdoptOptions } from '../commands/adopt.ts';
import { openLog } from '../shared/openLog.ts';
import { print } from '../shared/options.ts';

function checkId(what: string, id: string): void {
  if (!isSafeId(id)) throw new Error(`${what} ${JSON.stringify(id)} must match ${SAFE_ID_RULE}`);
}

/**
 * `runledger adopt LANE SESSION`: asks the board to bind a live session to a lane, so that the lane's
 * next turns run in it. Recorded in the log; the board's next round claims the request and binds it,
 * once the session is listed on a computer (it waits up to 180 s for that). With no board running on
 * the log it is refused (exit 2), not recorded: nothing would act on it before it lapsed.
 */
export async function adopt(lane: string, session: string | undefined, options: AdoptOptions): Promise<void> {
  checkId('lane', lane);
  if (options.release ? session !== undefined : session === undefined) throw new Error('give a LANE and a SESSION to adopt, or a LANE and --release');
  if (!options.release) {
    checkId('session', session!);
    // Only a running board binds a request, and it waits 180 s from the request for the session to be
    // listed: one recorded with no board running would lapse unseen. Refused, so nothing is recorded.
    // (Boards on PostgreSQL hold no lock file: there, several may run, and none is looked for.)
    const db = resolve(options.db);
    if (!isPostgresUrl(options.db) && lockHolder(boardLockPath(db)) === null) {
      throw new Error(
        `no board runs on ${db} (no live ${boardLockPath(db)}): start \`runledger daemon --db ${options.db}\` (or \`runledger server\`) first, then adopt; nothing was recorded`,
      );
    }
  }
  const store = await openLog(options);
  try {
    if (options.release) {
      await releaseAdoption(store, systemClock, lane, 'released with `runledger adopt --release`');
      print(options, { lane, released: true }, () => `lane ${lane}: its adoption request was released`);
      return;
    }
    const request = await requestAdoption(store, systemClock, lane, session!);
    print(
      options,
      { lane, session_id: session, request },
      () =>
        `lane ${lane} asked to adopt session ${session} (request ${request}); the board's next round binds it once the session is listed (it waits up to ${ADOPTION_LISTING_WINDOW_MS / 1000} s)`,
    );
  } finally {
    await store.close();
  }
}
