import { isDeepStrictEqual } from 'node:util';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { codec, eventDefinitions } from '../../events/catalog.ts';
import { decidedParts } from '../../replay/compare.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { runledger } from '../support/processes.ts';
import { openScenario, SCENARIO, tamperedScenario } from './scenarioLog.ts';

interface Row {
  readonly seq: number;
  readonly type: string;
  readonly data: string;
}

/** Every row of the recorded scenario, as text, and which of them are decisions (a cause). */
function scenarioRows(): { rows: Row[]; decisions: Row[] } {
  const db = new Database(SCENARIO, { readonly: true });
  try {
    const rows = db.prepare('SELECT seq, type, data, cause FROM events ORDER BY seq').all() as (Row & { cause: number | null })[];
    return { rows, decisions: rows.filter((r) => r.cause !== null) };
  } finally {
    db.close();
  }
}

const { rows, decisions } = scenarioRows();
const TYPES = Object.keys(eventDefinitions);

/** What a tamperer may write over a decision: its type and data, both as the `events` row holds them. */
interface Tamper {
  readonly seq: number;
  readonly type: string;
  readonly data: string;
  readonly how: string;
}

const anyJson = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.string(),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 }),
);

/** One decision and one way of changing it (fast-check shrinks both). */
const tamper: fc.Arbitrary<Tamper> = fc
  .record({
    row: fc.constantFrom(...decisions),
    pick: fc.nat(),
    other: fc.constantFrom(...rows),
    type: fc.constantFrom(...TYPES),
    value: anyJson,
    number: fc.integer(),
    kind: fc.nat(6),
  })
  .map(({ row, pick, other, type, value, number, kind }) => {
    const data = JSON.parse(row.data) as Record<string, unknown>;
    const keys = Object.keys(data);
    const key = keys.length ? keys[pick % keys.length]! : 'extra';
    const withKey = (v: unknown) => JSON.stringify({ ...data, [key]: v });
    const strings = keys.filter((k) => typeof data[k] === 'string');
    const text = strings.length ? strings[pick % strings.length]! : key;
    switch (kind) {
      case 0: {
        const { [key]: _dropped, ...rest } = data;
        return { seq: row.seq, type: row.type, data: JSON.stringify(rest), how: `drop ${key}` };
      }
      case 1:
        return {
          seq: row.seq,
          type: row.type,
          data: withKey(typeof data[key] === 'string' ? number : String(data[key])),
          how: `${key} of another type`,
        };
      case 2:
        return {
          seq: row.seq,
          type: row.type,
          data: JSON.stringify({ ...data, [text]: `${String(data[text] ?? '')}x` }),
          how: `change string ${text}`,
        };
      case 3:
        return { seq: row.seq, type: row.type, data: withKey(number), how: `${key} = ${number}` };
      case 4:
        return { seq: row.seq, type: row.type, data: '{}', how: 'data {}' };
      case 5:
        return { seq: row.seq, type: row.type, data: other.data, how: `data of seq ${other.seq}` };
      default:
        return { seq: row.seq, type, data: kind === 6 && pick % 2 ? withKey(value) : row.data, how: `type ${type}` };
    }
  });

/**
 * Whether the change leaves the decision as this version reads it (a field it drops, a default it
 * restores) and decides the same (its wording changed, see decidedParts).
 */
function readsTheSame(original: Row, changed: Tamper): boolean {
  if (changed.type !== original.type) return false;
  try {
    const [now, before] = decidedParts(
      original.type,
      codec.decodeData(original.seq, original.type, JSON.parse(changed.data)),
      codec.decodeData(original.seq, original.type, JSON.parse(original.data)),
    );
    return isDeepStrictEqual(now, before);
  } catch {
    // It no longer reads as its type: a change, surely.
    return false;
  }
}

function tampered(change: Tamper): string {
  return tamperedScenario((db) => db.prepare('UPDATE events SET type = ?, data = ? WHERE seq = ?').run(change.type, change.data, change.seq));
}

describe('replay of a scenario with one decision changed', () => {
  it('whatever a decision was changed to, replay names exactly its seq with both sides, and never crashes', async () => {
    await fc.assert(
      fc.asyncProperty(tamper, async (change) => {
        fc.pre(!readsTheSame(decisions.find((d) => d.seq === change.seq)!, change));
        const store = await openScenario(tampered(change));
        try {
          const report = await replayLog(store, deciders);
          expect(report.ok, change.how).toBe(false);
          if (report.ok) return;
          expect(report.seq, change.how).toBe(change.seq);
          expect(report.recorded.length + report.rederived.length).toBeGreaterThan(0);
        } finally {
          await store.close();
        }
      }),
      { numRuns: 100 },
    );
  });

  it('through the real CLI, a decision that breaks its fold exits 1 naming its seq with both sides, not 2', () => {
    const queued = decisions.find((d) => d.type === 'board.run.queued')!;
    const { runId: _dropped, ...rest } = JSON.parse(queued.data) as Record<string, unknown>;
    const path = tampered({ seq: queued.seq, type: queued.type, data: JSON.stringify(rest), how: 'drop runId' });

    const cli = runledger(['replay', '--db', path]);

    expect(cli.stderr).toBe('');
    expect(cli.status).toBe(1);
    expect(cli.stdout).toContain(`✗ seq ${queued.seq}: the recorded decision differs from the one re-derived`);
    expect(cli.stdout).toMatch(/recorded/);
    expect(cli.stdout).toMatch(/re-derived/);
  });
});
