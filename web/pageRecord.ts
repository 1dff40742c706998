import { durationOf, type RunRecord } from '../projections/audit/runRecord.ts';

/** A text longer than this is cut on the run page, saying so: `runledger show` prints it whole. */
const PAGE_TEXT = 64 * 1024;

/**
 * A run's record as its page is sent it: its long texts cut, each cut said in the text, and how long
 * its agent took (`durationMs`, the one rule of runRecord.ts: its process's start to its exit).
 */
export function pageRecord(record: RunRecord): RunRecord & { durationMs: number | null } {
  const cut = (text: string | null) =>
    text === null || text.length <= PAGE_TEXT
      ? text
      : `${text.slice(0, PAGE_TEXT)}\n… (${text.length - PAGE_TEXT} more characters: \`runledger show ${record.runId.slice(0, 8)}\` prints it all)`;
  return {
    ...record,
    prompt: cut(record.prompt),
    reply: cut(record.reply),
    error: cut(record.error),
    diff: record.diff === null ? null : { ...record.diff, text: cut(record.diff.text) ?? '' },
    phases: { ...record.phases },
    durationMs: durationOf(record),
  };
}
