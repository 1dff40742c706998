import { join } from 'node:path';

/** The folder test/support/buildScripts.ts built the run's scripts into, for the test processes it starts. */
export const BUILT_SCRIPTS_ENV = 'RUNLEDGER_TEST_SCRIPTS';

/**
 * The TypeScript files the tests run in a node of their own (a fixture script, or a module an inline
 * `node -e` script imports), relative to the repository. The run's global setup bundles them once
 * (test/support/buildScripts.ts), so each such process is a plain node start: through tsx's loader,
 * a start cost about a second of CPU more, and the suite starts dozens of them.
 */
export const SCRIPTS = [
  'test/fixtures/appender.ts',
  'test/fixtures/archiveKilled.ts',
  'test/fixtures/crashWriter.ts',
  'test/fixtures/pgClusterHolder.ts',
  'test/fixtures/hooks/hookBoard.ts',
  'test/fixtures/hooks/rounds.ts',
  'test/fixtures/session/racer.ts',
  'cli/shared/stdoutLines.ts',
  'runtime/store/sqlite/sqliteEventStore.ts',
  'adapters/agent/agentProcess.ts',
  'adapters/agent/launcher.ts',
  'adapters/agent/outputReaders.ts',
  'runtime/actors/clock.ts',
] as const;

export type Script = (typeof SCRIPTS)[number];
/** A script of test/fixtures/, named from there. */
export type Fixture = FixtureName<Script>;
type FixtureName<S> = S extends `test/fixtures/${infer Name}` ? Name : never;

/** Where a script of SCRIPTS lies built: the JavaScript file plain node runs or imports in its place. */
export function builtScript(script: Script): string {
  const folder = process.env[BUILT_SCRIPTS_ENV];
  if (!folder) throw new Error(`${BUILT_SCRIPTS_ENV} is not set: the scripts are built by vitest's global setup (test/support/buildScripts.ts)`);
  return join(folder, script.replace(/\.ts$/, '.js'));
}
