/**
 * `--retain-days` and `--delete-archives-after-days` (docs/retention.md) refused at start, before any log
 * is opened, where they cannot do what they say: on a PostgreSQL board (retention is built for SQLite
 * logs), a deletion setting without retention, or one that would delete what the live log still keeps.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../e2e/support/cluster.ts';
import { tempDir } from '../support/tempStore.ts';

describe('the retention options refused at start', () => {
  it('server --db postgres://… --retain-days: exit 2, naming the option and what to do, without connecting', async () => {
    // Port 9 (discard) answers nothing: a refusal that connected first would hang or say so.
    const result = await runCli(['server', '--db', 'postgres://runledger@127.0.0.1:9/runledger', '--retain-days', '30', '--port', '0']);
    expect(result).toMatchObject({
      status: 2,
      stdout: '',
      stderr:
        "error: option '--retain-days <n>' argument '30' is invalid. Retention keeps archives of a SQLite log only: on a PostgreSQL board, " +
        'start the server without --retain-days and bound the events table with PostgreSQL tools (docs/retention.md#postgresql)\n',
    });
  });

  it.each([
    [
      ['--delete-archives-after-days', '30'],
      "error: option '--delete-archives-after-days <m>' argument '30' is invalid. It deletes archives, which only --retain-days makes: give --retain-days N too\n",
    ],
    [
      ['--retain-days', '30', '--delete-archives-after-days', '7'],
      "error: option '--delete-archives-after-days <m>' argument '7' is invalid. It must be at least --retain-days (30): an archive is history older than that\n",
    ],
  ])('daemon %j: exit 2, naming the option, and writes nothing', async (args, said) => {
    const db = join(tempDir(), 'log', 'runledger.db');
    const result = await runCli(['daemon', '--db', db, '--port', '0', '--demo', ...args]);
    expect(result).toMatchObject({ status: 2, stdout: '', stderr: said });
    expect(existsSync(db)).toBe(false);
  });
});
