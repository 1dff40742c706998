import { Command } from '@commander-js/extra-typings';
import { helpAfter, type OptionsOf, withDb } from '../shared/options.ts';

const backup = () =>
  withDb(new Command('backup'))
    .description(
      'write a consistent copy of the SQLite log to FILE while the daemon runs (every tool reads the copy); a log on PostgreSQL is backed up with pg_dump',
    )
    .argument('<file>', 'where the copy goes: a new file (--force replaces one)')
    .option('--force', 'replace FILE if it exists');

export type BackupOptions = OptionsOf<ReturnType<typeof backup>>;

/** `runledger backup FILE`; what it does is in ../actions/backup.ts, loaded when it runs. */
export function backupCommand() {
  return helpAfter(backup(), [
    'runledger backup ~/backups/runledger-$(date +%F).db',
    'runledger backup /mnt/backup/runledger.db --force --json',
  ]).action(async (file, options) => (await import('../actions/backup.ts')).backup(file, options));
}
