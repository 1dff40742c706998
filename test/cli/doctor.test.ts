/**
 * `runledger doctor` (issue 14) against the stand-ins of test/fixtures/agents: each check says ok or
 * failed and what to fix, exit 0 when all pass and 1 otherwise, and nothing is written to the log or
 * left beside it. Through the built bin where the process is what a user meets (the stand-ins found on
 * PATH, the exit status as a shell sees it, Ctrl-C); elsewhere in this process, the same dispatch
 * (test/support/inProcessCli.ts), what the checks say being what is proven.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { agentBin } from '../fixtures/agents/bin.ts';
import { exitOf } from '../support/exitOf.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { type CliResult, repoRoot } from '../support/processes.ts';
import { tempDir } from '../support/tempStore.ts';
import { ownScope } from '../support/testScope.ts';

interface Checked {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly dir: string;
  readonly db: string;
}

/**
 * `runledger doctor ARGS` in a fresh folder, with the stand-ins first on PATH and `env` laid over. A
 * process of its own, waited for without blocking: the checks run at once (describe.concurrent), as
 * each mostly waits on its agent's turns.
 */
async function doctor(args: readonly string[], env: Record<string, string> = {}): Promise<Checked> {
  const dir = tempDir();
  const agents = agentBin(dir);
  const db = join(dir, 'state', 'runledger.db');
  const child = spawn(process.execPath, [join(repoRoot, 'cli/runledger.js'), 'doctor', '--db', db, ...args], {
    cwd: dir,
    env: { ...process.env, ...agents.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 30_000,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const status = await new Promise<number | null>((done, failed) => {
    child.on('error', failed);
    child.on('close', (code) => done(code));
  });
  return { status, stdout, stderr, dir, db };
}

interface CheckView {
  readonly check: string;
  readonly status: 'ok' | 'failed' | 'skipped';
  readonly detail: string;
  readonly fix?: string;
}

function checksOf(run: CliResult): CheckView[] {
  expect(run.stderr).toBe('');
  return (JSON.parse(run.stdout) as { checks: CheckView[] }).checks;
}

/**
 * A fresh folder with the stand-ins in it (test/fixtures/agents/bin.ts), named by their paths: a call
 * in this process has neither a PATH nor an environment of its own (test/support/inProcessCli.ts), so
 * what a test sets for its stand-in goes before the program in --exec, as a shell line may.
 */
function standIns(): { dir: string; claude: string; codex: string } {
  const dir = tempDir();
  const { bin } = agentBin(dir);
  return { dir, claude: join(bin, 'claude'), codex: join(bin, 'codex') };
}

/** `runledger doctor --db DIR/state/runledger.db ARGS` in this process. */
function doctorHere(dir: string, args: readonly string[]): Promise<CliResult> {
  return runInProcess(['doctor', '--db', join(dir, 'state', 'runledger.db'), ...args]);
}

const statuses = (checks: readonly CheckView[]) => Object.fromEntries(checks.map((c) => [c.check, c.status]));

// The checks run at once, each test's body its own scope (test/support/testScope.ts): the folders its
// helpers make (tempDir()) go when that test ends, not when the last one started does.
describe.concurrent('runledger doctor', () => {
  it(
    'given --exec claude (a stand-in on PATH), then every check passes, exit 0, and nothing is written beside the log',
    ownScope(async () => {
      const run = await doctor(['--exec', 'claude']);
      expect(run.status, run.stdout + run.stderr).toBe(0);
      const lines = run.stdout.split('\n');
      expect(lines[1]).toContain('runs: claude -p --output-format stream-json --verbose');
      expect(lines.find((l) => l.startsWith('ok      program'))).toContain(`claude is ${join(run.dir, 'bin')}`);
      expect(lines.find((l) => l.startsWith('ok      answer'))).toContain('stream-json with a result: "turn 1 (');
      expect(lines.find((l) => l.startsWith('ok      session'))).toMatch(/announced [0-9a-f-]{36}$/);
      expect(lines.find((l) => l.startsWith('ok      resume'))).toContain("--resume '");
      expect(lines.find((l) => l.startsWith('ok      resume'))).toContain('"turn 2 (');
      expect(run.stdout).toMatch(/every check passed\n$/);
      // No log, not even its folder; the scratch folder of the turns is gone.
      expect(existsSync(join(run.dir, 'state'))).toBe(false);
      expect(readdirSync(run.dir).sort()).toEqual(['agent-home', 'bin']);
    }),
  );

  for (const { exec, runs, format, resumed } of [
    {
      exec: 'claude --model opus-x',
      runs: ' -p --output-format stream-json --verbose --model opus-x',
      format: 'stream-json with a result',
      resumed: '--model opus-x --resume',
    },
    { exec: 'codex', runs: ' exec --json', format: '--json events ending in turn.completed', resumed: " exec --json resume '" },
  ])
    it(
      `given --exec '${exec}' (a stand-in, by its path), then every check passes, exit 0, and nothing is written beside the log`,
      ownScope(async () => {
        const agents = standIns();
        const [name, ...args] = exec.split(' ');
        const program = agents[name as 'claude' | 'codex'];
        const run = await doctorHere(agents.dir, ['--exec', [program, ...args].join(' ')]);
        expect(run.status, run.stdout + run.stderr).toBe(0);
        const lines = run.stdout.split('\n');
        expect(lines[1]).toContain(`runs: ${program}${runs}`);
        expect(lines.find((l) => l.startsWith('ok      program'))).toContain(`is ${program}`);
        expect(lines.find((l) => l.startsWith('ok      answer'))).toContain(`${format}: "turn 1 (`);
        expect(lines.find((l) => l.startsWith('ok      session'))).toMatch(/announced [0-9a-f-]{36}$/);
        expect(lines.find((l) => l.startsWith('ok      resume'))).toContain(resumed);
        expect(lines.find((l) => l.startsWith('ok      resume'))).toContain('"turn 2 (');
        expect(run.stdout).toMatch(/every check passed\n$/);
        expect(readdirSync(agents.dir).sort()).toEqual(['agent-home', 'bin']);
      }),
    );

  it(
    'given --json, then it prints the checks, each ok, with the command it runs',
    ownScope(async () => {
      const { dir, codex } = standIns();
      const run = await doctorHere(dir, ['--exec', `${codex} exec --skip-git-repo-check`, '--json']);
      expect(run.status).toBe(0);
      const view = JSON.parse(run.stdout) as Record<string, unknown>;
      expect(view).toMatchObject({ ok: true, kind: 'codex', command: `${codex} exec --json --skip-git-repo-check` });
      expect(statuses(view.checks as CheckView[])).toEqual({ program: 'ok', answer: 'ok', session: 'ok', resume: 'ok' });
    }),
  );

  it(
    'given a program that is not on PATH, then it says not found and how to install it, exit 1, and runs nothing',
    ownScope(async () => {
      const empty = join(tempDir(), 'empty');
      mkdirSync(empty);
      const run = await doctor(['--exec', 'claude --model opus', '--json'], { PATH: `${empty}${delimiter}/usr/bin${delimiter}/bin` });
      expect(run.status).toBe(1);
      const checks = checksOf(run);
      expect(statuses(checks)).toEqual({ program: 'failed', answer: 'skipped', session: 'skipped', resume: 'skipped' });
      expect(checks[0]).toMatchObject({ detail: 'not found: claude (looked up on PATH)' });
      expect(checks[0]!.fix).toContain('install Claude Code (npm install -g @anthropic-ai/claude-code');
      expect(checks[0]!.fix).toContain('PATH');
    }),
  );

  it(
    'given a relative path, then it says the path is read from the lane workspace: give it absolute',
    ownScope(async () => {
      const run = await doctorHere(tempDir(), ['--exec', './agent.sh', '--json']);
      expect(run.status).toBe(1);
      expect(checksOf(run)[0]).toMatchObject({ status: 'failed', detail: 'not found: ./agent.sh', fix: expect.stringContaining('absolute path') });
    }),
  );

  it(
    'given a plain command (echo-like), then it passes, saying there is no session: turns will not resume',
    ownScope(async () => {
      const run = await doctorHere(tempDir(), ['--exec', 'cat']);
      expect(run.status, run.stdout).toBe(0);
      expect(run.stdout).toContain('(a plain command: its whole stdout is the reply)');
      expect(run.stdout).toMatch(/^ok {6}answer {3}plain text: "You have about 2 minutes for this turn\. /m);
      expect(run.stdout).toContain('ok      session  no session: turns will not resume');
      expect(run.stdout).toContain('skipped resume   no session to resume');
    }),
  );

  for (const { exec, said, fix } of [
    { exec: 'claude' as const, said: 'No conversation found with session ID: ', fix: '~/.claude/projects/' },
    { exec: 'codex' as const, said: 'thread/read failed: thread not loaded: ', fix: 'CODEX_HOME' },
  ])
    it(
      `given '${exec}' refusing the resume, then the resume check fails with its words, exit 1`,
      ownScope(async () => {
        const agents = standIns();
        const run = await doctorHere(agents.dir, ['--exec', `STANDIN_REFUSE_RESUME=1 ${agents[exec]}`, '--json']);
        expect(run.status).toBe(1);
        const checks = checksOf(run);
        expect(statuses(checks)).toEqual({ program: 'ok', answer: 'ok', session: 'ok', resume: 'failed' });
        const session = checks[2]!.detail.replace('announced ', '');
        expect(checks[3]!.detail).toContain(`the agent refused to resume ${session}`);
        expect(checks[3]!.detail).toContain(`${said}${session}`);
        expect(checks[3]!.fix).toContain(fix);
      }),
    );

  for (const { exec, said, fix } of [
    { exec: 'claude' as const, said: '"Not logged in · Please run /login"', fix: 'type /login' },
    { exec: 'codex' as const, said: '"exceeded retry limit, last status: 401 Unauthorized, request id: 9a1f-AMS"', fix: '`codex login`' },
  ])
    it(
      `given '${exec}' not logged in, then the answer check says so with its words and how to log in, exit 1`,
      ownScope(async () => {
        const agents = standIns();
        const run = await doctorHere(agents.dir, ['--exec', `STANDIN_LOGGED_OUT=1 ${agents[exec]}`, '--json']);
        expect(run.status).toBe(1);
        const checks = checksOf(run);
        expect(statuses(checks)).toEqual({ program: 'ok', answer: 'failed', session: 'skipped', resume: 'skipped' });
        expect(checks[1]).toMatchObject({ detail: `the agent is not logged in: ${said}`, fix: expect.stringContaining(fix) });
      }),
    );

  for (const { wrapper, detail, fix } of [
    {
      wrapper: 'exec CLAUDE -p --output-format stream-json "$@"',
      detail: 'print mode refused stream-json without --verbose: "Error: When using --print, --output-format=stream-json requires --verbose"',
      fix: 'add --verbose',
    },
    { wrapper: 'exec CLAUDE "$@"', detail: 'the command started a terminal UI, which needs a terminal', fix: 'run the agent headless' },
    { wrapper: 'exec CLAUDE -p --output-format stream-json --verbose "$@"', detail: "the reply is an agent's stream of events", fix: 'named claude' },
  ])
    it(
      `given a wrapper script ('${wrapper}'), then the answer check says what went wrong and what to fix`,
      ownScope(async () => {
        // CLAUDE: the stand-in, by its path.
        const { dir, claude } = standIns();
        const script = join(dir, 'agent.sh');
        writeFileSync(script, `#!/bin/sh\n${wrapper.replace('CLAUDE', claude)}\n`);
        chmodSync(script, 0o755);
        const run = await doctorHere(dir, ['--exec', script, '--json']);
        expect(run.status).toBe(1);
        const answer = checksOf(run)[1]!;
        expect(answer).toMatchObject({ status: 'failed', detail: expect.stringContaining(detail), fix: expect.stringContaining(fix) });
      }),
    );

  it(
    'given an agent that does not answer in its budget, then it says so and how to raise it, exit 1',
    ownScope(async () => {
      const run = await doctorHere(tempDir(), ['--exec', 'sleep 30', '--timeout-s', '1', '--json']);
      expect(run.status).toBe(1);
      expect(checksOf(run)[1]).toMatchObject({ status: 'failed', detail: 'no answer within 1 s', fix: expect.stringContaining('raise --timeout-s') });
    }),
  );

  it(
    'given Ctrl-C while a turn runs, then the agent is stopped and the check says it was stopped, not what to fix in the agent',
    ownScope(async () => {
      const dir = tempDir();
      const agents = agentBin(dir);
      const started = join(dir, 'started');
      const child = spawn(
        process.execPath,
        [join(repoRoot, 'cli/runledger.js'), 'doctor', '--db', join(dir, 'state', 'runledger.db'), '--exec', `touch ${started} && sleep 30`],
        { cwd: dir, env: { ...process.env, ...agents.env }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const exited = exitOf(child).then(({ code }) => code);
      await vi.waitFor(() => expect(existsSync(started)).toBe(true), { timeout: 20_000, interval: 50 });
      child.kill('SIGINT');
      expect(await exited).toBe(1);
      expect(stdout).toMatch(/^failed {2}answer {3}stopped \(Ctrl-C or a signal\) before it answered: not checked$/m);
      expect(stdout).not.toContain('fix:');
      // The scratch folder of the turn is gone.
      expect(readdirSync(dir).sort()).toEqual(['agent-home', 'bin', 'started']);
    }),
  );

  it(
    'given an --exec with no program, then it is a usage error, exit 2',
    ownScope(async () => {
      const run = await doctorHere(tempDir(), ['--exec', '  ']);
      expect(run).toMatchObject({ status: 2, stdout: '' });
      expect(run.stderr).toContain('runledger: --exec "  " names no program: give the agent\'s command line, e.g. --exec claude');
    }),
  );
});
