/**
 * The parts of kysely the SQLite migrations use, loaded only when one is to run (migrations.ts). A
 * module of its own, imported by name: `import('kysely')` would keep the whole package in the bundle,
 * the PostgreSQL dialect with it.
 */
export { Kysely, Migrator, SqliteDialect, sql } from 'kysely';
