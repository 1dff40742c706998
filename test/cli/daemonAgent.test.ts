/**
 * Issue 26: no silent stand-in, for every command that starts an agent (daemon, run, doctor). A daemon started without `--exec` used to run the demo agent, so a
 * team's real prompts were answered "You asked: ..." and recorded succeeded; one started with an agent
 * that is not installed started cleanly, then failed every run with exit 127. Both now refuse at
 * start, exit 2, saying what to give or install, before anything is written. The refusals run at once
 * (describe.concurrent), each body its own scope (ownScope()) so that its folder goes when it ends: each
 * waits on a process of its own, or runs in this process where the command does not serve
 * (test/support/inProcessCli.ts).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../e2e/support/cluster.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { tempDir } from '../support/tempStore.ts';
import { ownScope } from '../support/testScope.ts';

/** A PATH with node and the shell's tools, and no agent on it. */
const BARE_PATH = { PATH: `${dirname(process.execPath)}:/usr/bin:/bin` };

describe.concurrent('runledger daemon and its agent', () => {
  for (const [how, args] of [
    ['its own board', [] as string[]],
    ['joining a board', ['--server', 'http://127.0.0.1:9', '--computer', 'c1', '--token', 't']],
  ] as const)
    it(
      `given no --exec (${how}), then it refuses naming --exec and --demo, exit 2, and writes nothing`,
      ownScope(async () => {
        const db = join(tempDir(), 'log', 'runledger.db');
        const result = await runCli(['daemon', '--db', db, '--port', '0', ...args]);
        expect(result).toMatchObject({
          status: 2,
          stdout: '',
          stderr:
            'runledger: no agent to run: give --exec COMMAND (e.g. --exec claude or --exec "codex exec"; `runledger doctor --exec COMMAND` checks one first), ' +
            'or --demo to try runledger out with its demo agent\n',
        });
        expect(existsSync(dirname(db))).toBe(false);
      }),
    );

  for (const [exec, said] of [
    ['nosuchagent', "not found: nosuchagent (looked up on PATH); install nosuchagent or put the folder holding it on the daemon's PATH"],
    [
      'claude -p --output-format stream-json --verbose',
      'not found: claude (looked up on PATH); install Claude Code (npm install -g @anthropic-ai/claude-code',
    ],
    ['codex exec', 'not found: codex (looked up on PATH); install Codex (npm install -g @openai/codex'],
    ['/opt/nowhere/agent', 'not found: /opt/nowhere/agent; no such file: check the path'],
  ] as const)
    it(
      `given --exec "${exec}" whose program is not there, then it refuses naming the program and how to install it, exit 2, and writes nothing`,
      ownScope(async () => {
        const db = join(tempDir(), 'log', 'runledger.db');
        const result = await runCli(['daemon', '--db', db, '--port', '0', '--exec', exec], 20_000, { env: BARE_PATH });
        expect(result.status).toBe(2);
        expect(result.stderr).toContain(`runledger: cannot run the agent of --exec "${exec}": ${said}`);
        expect(result.stderr).toMatch(/then start the daemon again\n$/);
        expect(existsSync(dirname(db))).toBe(false);
      }),
    );

  // It said "not found: cat": the lookup's shell was started in the file, as the nearest "folder".
  it(
    'given a --db under a file, then it names the log and that its folder is a file, not the agent, exit 2',
    ownScope(async () => {
      const file = join(tempDir(), 'notes.txt');
      writeFileSync(file, 'not a folder\n');
      const result = await runCli(['daemon', '--db', join(file, 'runledger.db'), '--port', '0', '--exec', 'cat']);
      expect(result).toMatchObject({
        status: 2,
        stderr: `runledger: the log ${file}/runledger.db cannot be written: the file cannot be opened (ENOTDIR: ${file} is not a folder)\n`,
      });
    }),
  );
});

const NO_AGENT =
  'runledger: no agent to run: give --exec COMMAND (e.g. --exec claude or --exec "codex exec"; `runledger doctor --exec COMMAND` checks one first), ' +
  'or --demo to try runledger out with its demo agent\n';

describe.concurrent("runledger run and doctor and their agent: the daemon's rule", () => {
  for (const [how, args] of [
    ['run', ['run', '--lane', 'x', '--prompt', 'hello']],
    ['run --dry-run', ['run', '--lane', 'x', '--prompt', 'hello', '--dry-run']],
    ['doctor', ['doctor']],
  ] as const)
    it(
      `given no --exec (${how}), then it refuses naming --exec and --demo, exit 2, and writes nothing`,
      ownScope(async () => {
        const db = join(tempDir(), 'log', 'runledger.db');
        const result = await runInProcess([...args, '--db', db]);
        expect(result).toMatchObject({
          status: 2,
          stdout: '',
          stderr: NO_AGENT.replace('no agent to run', args[0] === 'doctor' ? 'no agent to check' : 'no agent to run'),
        });
        expect(existsSync(dirname(db))).toBe(false);
      }),
    );

  for (const [how, extra] of [
    ['run', []],
    ['run --dry-run', ['--dry-run']],
  ] as const)
    it(
      `given --exec nosuchagent (${how}), then it refuses naming the program and how to install it, exit 2, and writes nothing`,
      ownScope(async () => {
        const db = join(tempDir(), 'log', 'runledger.db');
        const result = await runInProcess(['run', '--lane', 'x', '--prompt', 'hello', '--exec', 'nosuchagent', ...extra, '--db', db]);
        expect(result).toMatchObject({
          status: 2,
          stdout: '',
          stderr:
            'runledger: cannot run the agent of --exec "nosuchagent": not found: nosuchagent (looked up on PATH); ' +
            "install nosuchagent or put the folder holding it on the daemon's PATH (the command runs with /bin/sh -c), then run it again\n",
        });
        expect(existsSync(dirname(db))).toBe(false);
      }),
    );

  it(
    'runs the demo agent only under --demo',
    ownScope(async () => {
      const db = join(tempDir(), 'log', 'runledger.db');
      const result = await runInProcess(['run', '--lane', 'x', '--prompt', 'hello', '--dry-run', '--demo', '--db', db]);
      expect(result.status, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^You asked: "hello"\. Done in \d+ ms\.\n$/);
    }),
  );
});
