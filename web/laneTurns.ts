import type { RunListPage, RunListQuery, RunRow } from '../adapters/http/runListing.ts';
import type { LaneTurns } from './liveHub.ts';

/** The newest turns a lane page shows; older ones are in the history, filtered by the lane. */
export const LANE_TURNS = 100;
/** A text longer than this is cut on the lane page, saying so: its run's page and `runledger show` have it whole. */
const TURN_TEXT = 16 * 1024;

/**
 * A lane's conversation as its page shows it: its newest LANE_TURNS turns, in the order they were
 * asked (by submission: a turn cancelled while an earlier one ran stays after it), as `runledger lane`
 * prints them, each text cut past TURN_TEXT.
 */
export async function laneTurns(listRuns: (query: RunListQuery) => Promise<RunListPage>, lane: string): Promise<LaneTurns> {
  const page = await listRuns({ lane, state: null, computer: null, text: null, limit: LANE_TURNS, before: null, texts: 'whole' });
  const turns = [...page.runs]
    .reverse()
    .sort((a, b) => (a.submitted_at ?? '').localeCompare(b.submitted_at ?? ''))
    .map(cutTexts);
  return { turns, older: page.next !== null };
}

function cutTexts(row: RunRow): RunRow {
  const cut = (text: string) =>
    text.length <= TURN_TEXT ? text : `${text.slice(0, TURN_TEXT)}\n… (${text.length - TURN_TEXT} more characters: the run's page shows it all)`;
  return {
    ...row,
    prompt: cut(row.prompt),
    ...(row.reply === undefined ? {} : { reply: cut(row.reply) }),
    ...(row.error === undefined ? {} : { error: cut(row.error) }),
  };
}
