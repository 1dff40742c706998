import { describe, expect, it } from 'vitest';
import { messageOf } from '../../events/thrown.ts';
import { idsStartingWith, pickRun, RunIdPrefixError, resolveRunId } from '../../projections/audit/runIdPrefix.ts';
import { appendOrThrow } from '../../runtime/store/eventStore.ts';
import { input } from '../support/queueSpec.ts';
import { openTempStore } from '../support/tempStore.ts';

const RUNS = ['0a1b2c3d-0000-4000-8000-000000000001', '0a1b2c3d-0000-4000-8000-000000000002', '7f3e9a10-0000-4000-8000-000000000003', 'r1', 'r10'];
const lookup = async (prefix: string, limit: number) => idsStartingWith(RUNS, prefix, limit);

describe('a run id by a unique prefix (docs/rules.md#tools)', () => {
  it('a unique prefix of 6 or more characters names its run', async () => {
    expect(await resolveRunId('7f3e9a', lookup)).toBe(RUNS[2]);
    expect(await resolveRunId('7f3e9a10', lookup)).toBe(RUNS[2]);
  });

  it('a whole id is taken as it is, even when it starts another (r1 of r1 and r10), and a whole UUID needs no lookup', async () => {
    expect(await resolveRunId('r1', lookup)).toBe('r1');
    const never = async () => {
      throw new Error('looked up');
    };
    expect(await resolveRunId('7f3e9a10-0000-4000-8000-00000000ffff', never)).toBe('7f3e9a10-0000-4000-8000-00000000ffff');
  });

  it('an ambiguous prefix is refused listing the candidates', async () => {
    const refusal = await resolveRunId('0a1b2c3d', lookup).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(RunIdPrefixError);
    expect(messageOf(refusal)).toBe(`0a1b2c3d is ambiguous: it starts 2 runs: ${RUNS[0]}, ${RUNS[1]}`);
    expect((refusal as RunIdPrefixError).candidates).toEqual([RUNS[0], RUNS[1]]);
  });

  it('more than ten candidates are counted as such, ten listed', () => {
    const many = Array.from({ length: 11 }, (_, i) => `abcdef-${String(i).padStart(2, '0')}`);
    expect(() => pickRun('abcdef', many)).toThrow(/^abcdef is ambiguous: it starts more than 10 runs: abcdef-00, .*abcdef-09$/);
  });

  it('a prefix under 6 characters that starts runs is refused as too short', async () => {
    await expect(resolveRunId('7f3e', lookup)).rejects.toThrow('a run id prefix needs at least 6 characters');
  });

  it('what no run has or starts with is null, for the caller to answer as an unknown id', async () => {
    expect(await resolveRunId('ffffff', lookup)).toBeNull();
    expect(await resolveRunId('r99', lookup)).toBeNull();
  });

  it('what could not start an id is refused naming the rule', async () => {
    await expect(resolveRunId('../etc', lookup)).rejects.toThrow('"../etc" is not a run id or a prefix of one: ids match ^[A-Za-z0-9-]{1,64}$');
  });
});

describe('the log finds run ids by prefix', () => {
  it('among runs with a stream of their own and runs only named in a lane’s events, sorted, at most the limit', async () => {
    const store = await openTempStore();
    await appendOrThrow(store, {
      expected: { 'c1/lane:A': 0 },
      events: [input.frame('abcdef-2', 'A', 0), input.frame('abcdef-1', 'A', 1), input.frame('abcxyz', 'A', 2)],
    });
    await appendOrThrow(store, {
      expected: { 'c2/run:abcdef-3': 0 },
      events: [
        {
          ...input.frame('abcdef-3', 'B', 3),
          stream: 'c2/run:abcdef-3',
          data: { frameId: 'g1', kind: 'run.requested', runId: 'abcdef-3', lane: 'B' },
        },
      ],
    });
    expect(await store.entityIdsStartingWith('run', 'abcdef', 10)).toEqual(['abcdef-1', 'abcdef-2', 'abcdef-3']);
    expect(await store.entityIdsStartingWith('run', 'abcdef', 2)).toEqual(['abcdef-1', 'abcdef-2']);
    expect(await store.entityIdsStartingWith('run', 'abc', 10)).toEqual(['abcdef-1', 'abcdef-2', 'abcdef-3', 'abcxyz']);
    expect(await store.entityIdsStartingWith('run', 'zzz', 10)).toEqual([]);
  });
});
