import { Command } from 'commander';
import { deciders } from '../../actors/registry.ts';
import { replayLog } from '../../actors/replay/replayLog.ts';
import { hydrateProjections } from '../../projections/hydrate.ts';
import { projections } from '../../projections/registry.ts';
import { type DbOptions, openLog, print, withDb } from '../options.ts';

export function replayCommand(): Command {
  return withDb(new Command('replay'))
    .description('re-derive every recorded decision from its input (exit 1 naming the first seq that differs)')
    .option('--until <seq>', 'stop at this seq and print every projection as of it', parseSeq)
    .action(async (options: DbOptions & { until?: number }) => {
      const store = await openLog(options, { mustExist: true });
      try {
        const report = await replayLog(store, deciders, options.until === undefined ? {} : { until: options.until });
        if (!report.ok) {
          print(options, report, () =>
            [
              `✗ seq ${report.seq}: the recorded decision differs from the one re-derived (decider ${report.decider})`,
              `  input    seq ${report.input.seq} ${report.input.type} ${JSON.stringify(report.input.data)}`,
              `  recorded ${JSON.stringify(report.recorded)}`,
              `  re-derived ${JSON.stringify(report.rederived)}`,
            ].join('\n'),
          );
          process.exitCode = 1;
          return;
        }
        const state =
          options.until === undefined
            ? undefined
            : Object.fromEntries([...(await hydrateProjections(store, projections, options.until))].map(([n, f]) => [n, f.state]));
        print(options, { ...report, ...(state ? { projections: state } : {}) }, () =>
          [
            `✓ ${report.inputs} inputs re-decided, ${report.decisions} recorded decisions agree (through seq ${report.lastSeq})`,
            ...(state ? Object.entries(state).map(([name, s]) => `${name}: ${JSON.stringify(s, null, 2)}`) : []),
          ].join('\n'),
        );
      } finally {
        await store.close();
      }
    });
}

function parseSeq(text: string): number {
  const seq = Number(text);
  if (!Number.isSafeInteger(seq) || seq < 0) throw new Error(`--until wants a seq (a whole number ≥ 0), not "${text}"`);
  return seq;
}
