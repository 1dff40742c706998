import type { RunRow } from '../../adapters/http/runListing.ts';
import { duration } from '../../events/durationWords.ts';
import { LIVE_STATES } from '../../events/runStates.ts';
import { roundCost, usageWords } from '../../events/usageWords.ts';
import { changesFromWire } from '../../events/wire/changes.ts';
import { usageFromWire } from '../../events/wire/usage.ts';
import { describeChanges } from '../../events/workspace.ts';

/**
 * A run's facts in the words `runs`, `show` and `lane` print. What is not known is said so ("–"),
 * never made up: a run whose agent reported no cost shows "–", not $0.
 */

export const UNKNOWN = '–';

const LIVE: ReadonlySet<string> = new Set(LIVE_STATES);

/** The start of a run id, as the narration prints it: enough to name the run again (`show`, `cancel`). */
export function shortId(runId: string): string {
  return runId.slice(0, 8);
}

/** `2025-05-01 12:03` (UTC), or `2025-05-01 12:03:04 UTC` with `seconds`. */
export function when(iso: string | undefined, seconds = false): string {
  if (iso === undefined) return UNKNOWN;
  const text = iso.replace('T', ' ');
  return seconds ? `${text.slice(0, 19)} UTC` : text.slice(0, 16);
}

export function took(row: Pick<RunRow, 'duration_ms'>): string {
  return row.duration_ms === undefined ? UNKNOWN : duration(row.duration_ms);
}

/** `$0.0123`; unknown (no agent reported a cost) as "–". */
export function cost(row: Pick<RunRow, 'usage'>): string {
  const usd = row.usage?.cost_usd;
  return usd === undefined ? UNKNOWN : `$${roundCost(usd)}`;
}

/** The cost and the tokens, as the agent reported them: `cost $0.0123, tokens: 12 in, 7 out`; "unknown" when it said nothing. */
export function usageSaid(row: Pick<RunRow, 'usage'>): string {
  const usage = usageFromWire(row.usage);
  const words = usage ? usageWords(usage) : '';
  return words === '' ? 'unknown (its agent reported none)' : words;
}

/** The first line of a text with something on it, cut to `width` characters with an ellipsis. */
export function firstLine(text: string, width: number): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '';
  const flat = line.trim().replace(/\s+/g, ' ');
  return flat.length > width ? `${flat.slice(0, Math.max(1, width - 1))}…` : flat;
}

/** `succeeded on c1`, `queued`, `running on c1`. */
export function stateOn(row: Pick<RunRow, 'state' | 'computer_id'>): string {
  return row.computer_id ? `${row.state} on ${row.computer_id}` : row.state;
}

/** The width to fit lines to: the terminal's, else COLUMNS, else 120 (piped to a file or a pager). */
export function lineWidth(): number {
  const columns = process.stdout.isTTY ? process.stdout.columns : Number(process.env.COLUMNS);
  return Number.isSafeInteger(columns) && columns > 0 ? columns : 120;
}

/** Rows of cells as aligned columns (two spaces apart); the last column is cut to what the line has left. */
export function columns(header: readonly string[], rows: readonly (readonly string[])[], width: number): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((cells) => cells[i]!.length)));
  const fixed = widths.slice(0, -1).reduce((sum, w) => sum + w + 2, 0);
  const rest = Math.max(20, width - fixed);
  return all
    .map((cells) =>
      cells
        .map((cell, i) => (i === cells.length - 1 ? firstLine(cell, rest) : cell.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** One run for a person (`runledger show`): its facts, one a line, then its prompt, and its reply or error, whole. */
export function runText(row: Omit<RunRow, 'prompt'> & { prompt: string | undefined }): string {
  const facts: [string, string | undefined][] = [
    ['run', row.run_id],
    ['state', row.state],
    ['lane', row.lane ?? UNKNOWN],
    ['computer', row.computer_id ?? (row.state === 'queued' ? 'none yet' : 'none')],
    ['submitted', row.submitted_at === undefined ? undefined : when(row.submitted_at, true)],
    ['started', row.started_at === undefined ? undefined : when(row.started_at, true)],
    ['finished', row.finished_at === undefined ? undefined : when(row.finished_at, true)],
    ['took', row.duration_ms === undefined ? undefined : took(row)],
    ['cost', row.usage === undefined && LIVE.has(row.state) ? 'not known until it ends' : usageSaid(row)],
    ['doing', row.progress],
    // What its turn changed in its lane's worktree (`show --diff` prints the diff itself).
    ['changes', row.changes === undefined ? undefined : `${describeChanges(changesFromWire(row.changes))} (show --diff prints it)`],
  ];
  const shown = facts.filter((fact): fact is [string, string] => fact[1] !== undefined);
  const width = Math.max(...shown.map(([name]) => name.length));
  const lines = shown.map(([name, value]) => `${name.padEnd(width)}  ${value}`);
  const block = (title: string, text: string | undefined) => (text === undefined ? [] : ['', `${title}:`, text.replace(/\n+$/, '')]);
  return [...lines, ...block('prompt', row.prompt), ...block('reply', row.reply), ...block('error', row.error)].join('\n');
}
