import type { DomainEvent } from '../events/catalog.ts';
import { provisional } from '../events/provisional.ts';
import { describeEvent } from '../projections/audit/describeEvent.ts';
import { type DecisionView, sameDecision, view, whereTheyDiffer } from './compare.ts';
import type { EntityReplay } from './replayEntity.ts';
import type { ReplayDifference, ReplayStep } from './replayer.ts';
import type { ReplayReport } from './replayLog.ts';
import type { UntilReport } from './replayUntil.ts';

const HEADLINES: Record<ReplayDifference['kind'], string> = {
  differs: 'the recorded decision differs from the one re-derived',
  missing: 'a decision is missing: the decider now decides more than was recorded',
  extra: 'a recorded decision is not re-derived: more was recorded than the decider now decides',
  ignored: 'an input was recorded that its decider ignores',
  orphan: 'a recorded decision does not follow the input it names as its cause',
};

/** The first difference, with its input and the recorded and re-derived decisions side by side. */
export function formatDifference(d: ReplayDifference): string {
  const who = d.decider === '?' ? '' : ` (decider ${d.decider}${d.scope && d.scope !== d.decider ? `, scope ${d.scope}` : ''})`;
  const lines = [`✗ seq ${d.seq}: ${HEADLINES[d.kind]}${who}`];
  if (d.kind === 'orphan') {
    lines.push(`  decision  ${eventLine(d.recorded[0]!)}`, `  ${d.detail}`);
    return lines.join('\n');
  }
  lines.push(`  input     ${eventLine(view(d.input))}`, `            ${describeEvent(d.input)}`);
  if (d.kind === 'ignored') lines.push(`  ${d.detail}`);
  lines.push(...sideBySide(d.recorded, d.rederived, d.index));
  return lines.join('\n');
}

/** Each decision: recorded beside re-derived, the ones that differ with where. */
function sideBySide(recorded: readonly DecisionView[], rederived: readonly DecisionView[], marked: number): string[] {
  const count = Math.max(recorded.length, rederived.length);
  if (count === 0) return ['  no decision recorded, none re-derived'];
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const a = recorded[i];
    const b = rederived[i];
    const agree = a !== undefined && b !== undefined && whereTheyDiffer(a, b) === 'data: equal once written';
    const mark = agree ? '✓ agrees' : `✗ ${whereTheyDiffer(a, b)}`;
    lines.push(`  decision ${i + 1} of ${count}${i === marked ? ' (the first that differs)' : ''}: ${mark}`);
    lines.push(`    recorded    ${a ? eventLine(a) : '(none)'}`);
    if (!agree) lines.push(`    re-derived  ${b ? eventLine(b) : '(none)'}`);
  }
  return lines;
}

function eventLine(e: DecisionView): string {
  const seq = e.seq === undefined ? 'seq –  ' : `seq ${e.seq}  `;
  return `${seq}${time(e.at)}  ${e.stream}  ${e.type}  ${clip(JSON.stringify(e.data) ?? 'undefined', 400)}`;
}

/** `runledger replay`: the whole log verified, or its first difference. */
export function formatVerified(report: ReplayReport): string {
  if (!report.ok) return formatDifference(report);
  const lines = [`✓ ${report.inputs} inputs re-decided, ${report.decisions} recorded decisions agree (through seq ${report.lastSeq})`];
  const start = report.startedFrom;
  if (start)
    lines.push(
      `  from the starting checkpoint at seq ${start.seq} in ${start.where}: the history before it is not here (an archive deleted, or replayed alone)`,
    );
  for (const r of report.resumedFrom ?? []) {
    lines.push(
      `  seqs ${r.missing.from}..${r.missing.to} are not here (an archive deleted): went on from the starting checkpoint at seq ${r.seq} in ${r.where}`,
    );
  }
  return lines.join('\n');
}

/** `runledger replay --until SEQ`: what was verified, from where, and every projection. */
export function formatUntil(report: UntilReport): string {
  const lines: string[] = [];
  if (report.difference) lines.push(formatDifference(report.difference));
  else {
    lines.push(
      `✓ ${report.inputs} inputs re-decided, ${report.decisions} recorded decisions agree from seq ${report.verifiedFrom + 1} through seq ${report.lastSeq}` +
        (report.verifiedFrom > 0
          ? ` (from the deciders' snapshot at seq ${report.verifiedFrom}; a full \`runledger replay\` verifies what comes before it)`
          : ''),
    );
  }
  // Worth saying on a long log only: a short one folds from seq 0 in no time.
  if (report.verifiedFrom === 0 && report.folded >= 10_000) {
    lines.push(
      `  (no snapshot of the deciders' states before seq ${report.until}, so they were folded from seq 0: \`runledger rebuild --write\` stores them)`,
    );
  }
  lines.push(`projections as of seq ${report.lastSeq} (${report.folded} events folded past the nearest snapshots):`);
  const from = new Map(report.projectionsFrom.map((s) => [s.name, s]));
  for (const [name, state] of Object.entries(report.projections)) {
    const start = from.get(name);
    const text = JSON.stringify(state, null, 2);
    // A big state is printed on one line: `--json` is the way to read it whole with a tool.
    const shown = text.length > 64 * 1024 ? JSON.stringify(state) : text;
    lines.push(`${name} (from ${start?.from === 'snapshot' ? `its snapshot at seq ${start.seq}` : 'seq 0'}): ${shown}`);
  }
  return lines.join('\n');
}

/** `runledger replay --run ID`: each input that concerns it, with its decisions, and what was compared. */
export function formatEntity(report: EntityReplay): string {
  const lines: string[] = [];
  const decisions = report.steps.reduce((n, s) => n + s.recorded.length, 0);
  const differing = report.steps.filter((s) => s.difference).length;
  lines.push(
    `${report.kind} ${report.id}: ${report.steps.length} input(s) re-decided, ${decisions} recorded decision(s) compared` +
      (differing ? `, ${differing} input(s) with a difference` : ', all agree'),
  );
  const scopes = report.scopes.map(
    (s) => `${s.decider} ${s.scope === s.decider ? '' : `${s.scope} `}(from ${s.from ? `its snapshot at seq ${s.from}` : 'seq 0'})`,
  );
  lines.push(`  compared: each input against its decider's state folded from the log up to it: ${scopes.join(', ') || 'none'}`);
  lines.push(
    `  folded: seq ${report.folded.from + 1} to ${report.folded.to}, ${report.folded.events} events read, only those scopes folded` +
      (report.folded.snapshots.length ? `; snapshots loaded at seq ${report.folded.snapshots.join(', ')}` : ''),
  );
  if (report.undecided.length)
    lines.push(`  not compared: seq ${report.undecided.join(', ')} (no decider takes ${report.undecided.length === 1 ? 'it' : 'them'} as an input)`);
  for (const step of report.steps) lines.push('', ...stepLines(step));
  if (report.difference) lines.push('', formatDifference(report.difference));
  return lines.join('\n');
}

function stepLines(step: ReplayStep): string[] {
  const { input } = step;
  const mark = step.difference ? '✗' : '✓';
  const lines = [
    `${mark} seq ${input.seq}  ${time(input.at)}  ${input.stream}  ${input.type}: ${describeEvent(input)}  [${step.decider}${step.scope === step.decider ? '' : ` ${step.scope}`}]`,
  ];
  const count = Math.max(step.recorded.length, step.rederived.length);
  if (count === 0) lines.push('    no decision (none recorded, none re-derived)');
  for (let i = 0; i < count; i++) {
    const a: DomainEvent | undefined = step.recorded[i];
    const b = step.rederived[i];
    if (a && b && sameDecision(a, b)) {
      lines.push(`    = seq ${a.seq}  ${a.stream}  ${a.type}: ${describeEvent(a)}`);
      continue;
    }
    lines.push(`    ≠ recorded    ${a ? `seq ${a.seq}  ${a.stream}  ${a.type}: ${describeEvent(a)}` : '(none)'}`);
    lines.push(`      re-derived  ${b ? `${b.stream}  ${b.type}: ${describeEvent(provisional(b, input.seq))}` : '(none)'}`);
    lines.push(`      ${whereTheyDiffer(a ? view(a) : undefined, b ? view(b) : undefined)}`);
  }
  if (step.difference?.kind === 'ignored') lines.push(`    ${step.difference.detail}`);
  return lines;
}

function time(at: number): string {
  return new Date(at).toISOString().replace('T', ' ');
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
