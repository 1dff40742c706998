import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../events/envelope.ts';
import { hydrateProjections, saveCheckpoints } from '../../runtime/folds/hydrate.ts';
import { rebuildProjections } from '../../runtime/folds/keeper/rebuild.ts';
import { counterEventOf } from '../fixtures/counter/counterEvents.ts';
import { counterRegistry, projectionsWithCounters as projections } from '../fixtures/counter/counterRegistry.ts';
import { oneTo } from '../support/events.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { startChild } from '../support/processes.ts';
import { storeKinds } from '../support/storeKinds.ts';

function markOf(event: StoredEvent): number {
  const bumped = counterEventOf(event);
  if (bumped?.type !== 'counter.bumped') throw new Error(`unexpected ${event.type} at seq ${event.seq}`);
  return bumped.data.total;
}

describe.each(storeKinds)('on $name', (kind) => {
  describe('a writer killed mid-append', () => {
    it('given a process SIGKILLed while appending, when the log is reopened, then the log is a clean prefix and projections rebuild equal', async () => {
      const path = await kind.fresh();
      const writer = startChild('crashWriter.ts', [path]);
      await writer.waitForLine((line) => line.startsWith('committed ') && Number(line.slice(10)) >= 90);

      writer.kill('SIGKILL');
      expect((await writer.waitForExit()).signal).toBe('SIGKILL');
      const reported = Math.max(
        ...writer
          .output()
          .filter((l) => l.startsWith('committed '))
          .map((l) => Number(l.slice(10))),
      );

      const store = await kind.open(path);
      const log = await store.readAll(0, 1_000_000);
      expect(log.map((e) => e.seq)).toEqual(oneTo(log.length));
      // Each append wrote one mark to three streams: a mark is there three times or not at all, and the
      // marks present are 1..M, every one the writer reported committed among them.
      expect(log.length % 3).toBe(0);
      const marks = log.map(markOf);
      const last = log.length / 3;
      expect(last).toBeGreaterThanOrEqual(reported);
      expect(marks).toEqual(oneTo(last).flatMap((m) => [m, m, m]));
      for (const stream of ['counter:a', 'counter:b', 'counter:c']) {
        expect((await store.readStream(stream)).map((e) => [e.version, markOf(e)])).toEqual(oneTo(last).map((m) => [m, m]));
      }

      // The writer's own checkpoints, cut anywhere, agree with a rebuild from seq 0.
      expect((await store.checkpoints.list()).length).toBeGreaterThan(0);
      expect((await rebuildProjections(store, projections)).filter((r) => !r.equal)).toEqual([]);
      const hydrated = await hydrateProjections(store, projections);
      const refolded = projections.map((p) => log.reduce((state, event) => p.evolve(state, event), p.initial()));
      expect(projections.map((p) => hydrated.get(p.name)!.state)).toEqual(refolded);
      expect(hydrated.get('counters')!.state).toEqual({ a: last, b: last, c: last });
      await saveCheckpoints(store, hydrated.values());
      await store.close();

      const cli = await runInProcess(['rebuild', '--db', path], { registry: counterRegistry });
      expect(cli.stderr).toBe('');
      expect(cli.status).toBe(0);
      expect(cli.stdout).toMatch(/✓ counters: equals its checkpoint at seq \d+/);
    });
  });
});
