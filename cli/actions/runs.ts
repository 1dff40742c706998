import type { RunRow } from '../../adapters/http/runListing.ts';
import type { LaneOptions, RunsOptions } from '../commands/client.ts';
import { boardRuns, type RunFilters } from '../shared/boardRuns.ts';
import { print } from '../shared/options.ts';
import { columns, cost, lineWidth, shortId, stateOn, took, UNKNOWN, when } from '../shared/runWords.ts';

/** `runledger runs`: the board's runs, newest first (live ones first), as a table or a JSON list. */
export async function runs(o: RunsOptions): Promise<void> {
  const filters = { lane: o.lane, state: o.state, computer: o.computer, q: o.text };
  const rows = await boardRuns(o, filters, o.limit);
  print(o, rows, () => {
    if (rows.length === 0) return `no runs${filtersSaid(filters)} on the board at ${o.server}`;
    const header = ['RUN', 'LANE', 'STATE', 'COMPUTER', 'FINISHED (UTC)', 'TOOK', 'COST', 'PROMPT'];
    const cells = rows.map((row) => [
      shortId(row.run_id),
      row.lane ?? UNKNOWN,
      row.state,
      row.computer_id ?? UNKNOWN,
      when(row.finished_at),
      took(row),
      cost(row),
      row.prompt,
    ]);
    return columns(header, cells, lineWidth());
  });
}

function filtersSaid(filters: RunFilters): string {
  const said = [
    filters.lane === undefined ? null : `in lane ${filters.lane}`,
    filters.state === undefined ? null : filters.state,
    filters.computer === undefined ? null : `claimed by ${filters.computer}`,
    filters.q === undefined ? null : `with "${filters.q}" in them`,
  ].filter((part) => part !== null);
  return said.length === 0 ? '' : ` ${said.join(', ')}`;
}

/**
 * `runledger lane LANE`: its conversation, oldest turn first, each prompt whole and then its reply or
 * error whole; `--json` the same as a list. A lane the board has no run of is a finding (exit 1): a
 * mistyped lane is said so, not shown as an empty conversation.
 */
export async function lane(laneId: string, o: LaneOptions): Promise<void> {
  // The board lists them newest first (finished ones by when they finished); a conversation reads in
  // the order its turns were asked, which a run cancelled while an earlier turn ran does not keep.
  const turns = (await boardRuns(o, { lane: laneId }, o.last ?? Number.POSITIVE_INFINITY, true))
    .reverse()
    .sort((a, b) => (a.submitted_at ?? '').localeCompare(b.submitted_at ?? ''));
  if (turns.length === 0) {
    if (o.json) print(o, [], () => '');
    process.stderr.write(`runledger: the board at ${o.server} has no run in lane ${laneId}\n`);
    process.exitCode = 1;
    return;
  }
  print(o, turns, () => transcript(laneId, turns, o.last !== undefined));
}

function transcript(laneId: string, turns: readonly RunRow[], last: boolean): string {
  const head = `lane ${laneId}: ${last ? 'its last ' : ''}${turns.length} turn${turns.length === 1 ? '' : 's'}, oldest first`;
  return [head, ...turns.map(turnText)].join('\n\n');
}

/** One turn: a line of its facts, its prompt quoted, then its reply (or error, or what it is doing). */
function turnText(turn: RunRow): string {
  const facts = [shortId(turn.run_id), stateOn(turn), when(turn.finished_at ?? turn.submitted_at), took(turn), cost(turn)];
  const prompt = turn.prompt
    .replace(/\n+$/, '')
    .split('\n')
    .map((line) => `> ${line}`.trimEnd())
    .join('\n');
  const said = [turn.reply?.replace(/\n+$/, ''), turn.error === undefined ? undefined : `error: ${turn.error}`].filter((t) => t !== undefined);
  if (said.length === 0)
    said.push(
      turn.progress !== undefined
        ? `(${turn.state}: ${turn.progress})`
        : `(${turn.state === 'queued' ? 'waiting for its turn' : `${turn.state}, no reply yet`})`,
    );
  return `── ${facts.join(' · ')}\n${prompt}\n\n${said.join('\n\n')}`;
}
