/**
 * `npm start` (`runledger daemon --demo`) as a new user sees it: runs queue, a lane's second turn waits
 * for its first, other lanes go ahead meanwhile, all complete. The demo runs a second computer, and a
 * run is offered to one computer at a time: the lanes are spread over both, a lane's turns go to one
 * computer, in order, and no computer claims a run another has (nothing is skipped). The two cases
 * wait on the demo's turns, each on a log and a port of its own: they run at once (describe.concurrent).
 */
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { tempDir } from '../support/tempStore.ts';
import { ownScope } from '../support/testScope.ts';
import { checkLogs, freePort, startCli } from './support/cluster.ts';

/** The index in `text` of the narration line of `runId` matching `what`, or -1. */
function lineOf(text: string, runId: string, what: string): number {
  return text.search(new RegExp(`run ${runId} ${what}`));
}

describe.concurrent('runledger daemon --demo', () => {
  it(
    'given a fresh log, then its narration shows the demo runs spread over both computers, a second turn wait for its first on the same computer, and every run settle; a second start reuses its computers',
    ownScope(async ({ expect }) => {
      const db = join(tempDir(), 'demo.db');
      const args = ['daemon', '--demo', '--db', db, '--port', String(await freePort())];
      const daemon = startCli(args);

      await daemon.waitForOutput(/demo: a second computer, demo-2, joined the board/);
      await daemon.waitForOutput(/(settled, reported to the board[\s\S]*){4}/, 30_000);
      const out = daemon.stdout;
      expect(out).toMatch(/local: queued in lane/);
      expect(out).toMatch(/demo-2: queued in lane/);
      const [first, second] = [...out.matchAll(/run (\w+) queued on the board in lane alice/g)].map((m) => m[1]!);
      const computer = new RegExp(`run ${first} (local|demo-2): queued in lane alice`).exec(out)?.[1];
      expect(computer).toBeDefined();
      // Alice's second turn went to the computer of her first, and was claimed only once the first had settled there.
      expect(lineOf(out, second!, `${computer}: queued in lane alice`)).toBeGreaterThan(-1);
      expect(lineOf(out, second!, `${computer}: claimed`)).toBeGreaterThan(lineOf(out, first!, `${computer}: settled`));
      expect(out).not.toMatch(/skipped: another computer has it/);
      const stopped = await daemon.stop('SIGTERM');
      expect(stopped, daemon.describe()).toEqual({ code: 0, signal: null });

      const again = startCli(args);
      await again.waitForOutput(/demo: a second computer, demo-2, joined the board/);
      expect(again.stdout).not.toMatch(/did not start/);
      // The narration tells what happens from this start on: the last life's runs are not told again.
      expect(again.stdout).not.toContain(`run ${first} queued on the board`);
      expect(await again.stop('SIGTERM'), again.describe()).toEqual({ code: 0, signal: null });
      await checkLogs([db]);
    }),
  );

  it(
    'given --log-json, then every line of its narration is a JSON object with the decision and its sentence',
    ownScope(async ({ expect }) => {
      const db = join(tempDir(), 'demo.db');
      const daemon = startCli(['daemon', '--demo', '--log-json', '--db', db, '--port', String(await freePort())]);

      await daemon.waitForOutput(/("msg":"settled, reported to the board[\s\S]*){4}/, 30_000);
      const lines = daemon.stdout.split('\n').filter(Boolean);
      for (const line of lines) {
        expect(JSON.parse(line), line).toMatchObject({
          level: 30,
          pid: expect.any(Number),
          seq: expect.any(Number),
          stream: expect.any(String),
          type: expect.any(String),
          at: expect.any(Number),
          msg: expect.any(String),
        });
      }
      expect(lines.map((line) => JSON.parse(line).type)).toContain('board.run.finished');
      expect(await daemon.stop('SIGTERM'), daemon.describe()).toEqual({ code: 0, signal: null });
    }),
  );
});
