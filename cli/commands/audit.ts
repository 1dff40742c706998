import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command } from 'commander';
import { checkEntityId, entityTimeline, formatTimeline, type Timeline } from '../../projections/audit/runTimeline.ts';
import { type DbOptions, openLog, print, withDb } from '../options.ts';

export function auditCommand(): Command {
  return withDb(new Command('audit'))
    .description('the timeline of a run (or session): every event of it in order, each with a one-line reason (exit 1 when the log has none)')
    .argument('<id>', 'the run id (or session id) to explain')
    .action(async (id: string, options: DbOptions) => {
      checkEntityId(id);
      const path = resolve(options.db);
      // A read must not leave an empty log behind where the user mistyped a path.
      if (!existsSync(path)) {
        fail(`there is no log at ${path}: give its file with --db FILE`);
        return;
      }
      const store = await openLog(options);
      let timeline: Timeline | null;
      try {
        timeline = (await entityTimeline(store, 'run', id)) ?? (await entityTimeline(store, 'session', id));
      } finally {
        await store.close();
      }
      if (!timeline) {
        fail(`no run or session "${id}" in ${path}: the log holds no event of run:${id} or session:${id}`);
        return;
      }
      const found = timeline;
      print(options, found, () => formatTimeline(found));
    });
}

function fail(message: string): void {
  process.stderr.write(`runledger: ${message}\n`);
  process.exitCode = 1;
}
