import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { HOOKS_STREAM, HookRunner } from '../../../apps/board/chores/hooks/hookRunner.ts';
import { FakeClock, systemClock } from '../../../runtime/actors/clock.ts';
import { appendRun } from '../../fixtures/hooks/boardLog.ts';
import { runInProcess } from '../../support/inProcessCli.ts';
import { startChild } from '../../support/processes.ts';
import { openTempStore, tempDbPath, tempDir } from '../../support/tempStore.ts';

const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  for (const deadline = Date.now() + ms; !check(); ) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a board killed while a hook runs', () => {
  it('given a board SIGKILLed while its hook sleeps, when a board starts again, then the hook is recorded interrupted, not run again, and the audit shows it', async () => {
    const dir = tempDir();
    const db = join(dir, 'runledger.db');
    const file = join(dir, 'hook.log');
    const store = await openTempStore(db);
    await appendRun(store, 'before', 'L');
    // The hook says it began (with its process group), sleeps, then says it finished.
    const hook = `echo "began $$" >> '${file}'; sleep 20; echo finished >> '${file}'`;
    const board = startChild('hooks/hookBoard.ts', [db, JSON.stringify({ on_run_ended: hook })]);
    await board.waitForLine((line) => line === 'ready');

    const { finished } = await appendRun(store, 'r1', 'L');
    await until(() => lines(file).length > 0);
    const hookGroup = Number(lines(file)[0]!.split(' ')[1]);
    onTestFinished(() => {
      try {
        process.kill(-hookGroup, 'SIGKILL');
      } catch {}
    });
    board.kill('SIGKILL');
    expect((await board.waitForExit()).signal).toBe('SIGKILL');
    expect((await store.readStream(HOOKS_STREAM)).map((e) => e.type)).toEqual(['outbox.taken', 'outbox.taken']);

    const restarted = new HookRunner({ store, clock: systemClock, commands: { on_run_ended: hook } });
    await restarted.open(await store.headSeq());
    expect(await restarted.drain()).toBe(0);
    const stream = await store.readStream(HOOKS_STREAM);
    expect(stream.map((e) => e.type)).toEqual(['outbox.taken', 'outbox.taken', 'hook.interrupted']);
    expect(stream[2]!.data).toEqual({
      effect: finished,
      hook: 'on_run_ended',
      runId: 'r1',
      detail: `taken by ${stream[1]!.actor}, which stopped before the hook's end was recorded: it is not run again`,
    });
    // Opened once more (another restart): settled already, not interrupted twice, never run again.
    await new HookRunner({ store, clock: systemClock, commands: { on_run_ended: hook } }).open();
    expect((await store.readStream(HOOKS_STREAM)).length).toBe(3);
    expect(lines(file).filter((l) => l.startsWith('began'))).toHaveLength(1);
    await store.close();

    const audit = await runInProcess(['audit', 'r1', '--db', db]);
    expect(audit.status).toBe(0);
    expect(audit.stdout).toMatch(
      /hook\.interrupted\s+hook on_run_ended \(for seq \d+\) was interrupted: taken by \S+, which stopped before the hook's end was recorded: it is not run again/,
    );
  });
});

describe('hooks a dead board took', () => {
  it('given a take by a process that died, when two boards open at once, then it is recorded interrupted once, and never run', async () => {
    const dir = tempDir();
    const db = join(dir, 'runledger.db');
    const file = join(dir, 'hook.log');
    const store = await openTempStore(db);
    const other = await openTempStore(db);
    const dead = await openTempStore(db, { writer: `${hostname()}:999999` });
    const { finished } = await appendRun(store, 'r1', 'L');
    await dead.append({
      expected: { [HOOKS_STREAM]: 0 },
      events: [{ stream: HOOKS_STREAM, type: 'outbox.taken', data: { through: finished, effects: [finished] }, at: 1 }],
    });

    const commands = { on_run_ended: `echo ran >> '${file}'` };
    const boards = [new HookRunner({ store, clock: systemClock, commands }), new HookRunner({ store: other, clock: systemClock, commands })];
    await Promise.all(boards.map((b) => b.open(finished)));
    await Promise.all(boards.map((b) => b.drain()));

    expect((await store.readStream(HOOKS_STREAM)).map((e) => e.type)).toEqual(['outbox.taken', 'hook.interrupted']);
    expect(lines(file)).toEqual([]);
  });
});

describe('a board rolled back from a newer version', () => {
  it('given a dead newer board took a hook on a row this version cannot read, then this board starts, settling that take as interrupted', async () => {
    const path = tempDbPath();
    const store = await openTempStore(path, { foreignRows: () => {} });
    const raw = new Database(path);
    raw.exec(
      "INSERT INTO events (stream, version, type, data, at, cause, actor) VALUES ('run:r1', 1, 'board.run.teleported', '{}', 1, NULL, 'newer:1')",
    );
    raw.close();
    const dead = await openTempStore(path, { writer: `${hostname()}:999999`, foreignRows: () => {} });
    await dead.append({
      expected: { [HOOKS_STREAM]: 0 },
      events: [{ stream: HOOKS_STREAM, type: 'outbox.taken', data: { through: 1, effects: [1] }, at: 1 }],
    });
    await expect(new HookRunner({ store, clock: new FakeClock(), commands: { on_run_ended: 'true' } }).open()).resolves.toBeUndefined();
    expect((await store.readStream(HOOKS_STREAM)).map((e) => e.type)).toEqual(['outbox.taken', 'outbox.interrupted']);
  });
});
