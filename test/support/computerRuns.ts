import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onTestFinished, vi } from 'vitest';
import { shellQuote } from '../../actors/run/resume.ts';
import { ComputerRuns, type ComputerRunsOptions } from '../../apps/computer/computerRuns.ts';
import type { DomainEvent, NewDomainEvent } from '../../events/catalog.ts';
import type { Clock } from '../../runtime/actors/clock.ts';
import { type ActorSystem, startActorSystem, stopSystem } from '../../runtime/actors/runtime.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { interpreterOf } from '../fixtures/agents/interpreter.ts';
import type { StandInBoard } from './standInBoard.ts';
import { tempDir } from './tempStore.ts';

const fixtures = fileURLToPath(new URL('../fixtures/agents/', import.meta.url));

/** The command line of a fixture agent, with absolute paths: agents run in their lane's workspace. */
export function fixtureAgent(script: string, ...args: string[]): string {
  return [interpreterOf(script), join(fixtures, script), ...args].map(shellQuote).join(' ');
}

/**
 * A fixture agent dressed as Claude Code: a `claude` program (a two-line script in a temp folder)
 * run with `--output-format stream-json`, which is what makes the daemon read its output as Claude
 * events and put `--resume <id>` on a resumed turn's command line.
 */
export function claudeAgent(script: string, ...args: string[]): string {
  const bin = join(tempDir(), 'bin');
  mkdirSync(bin, { recursive: true });
  const program = join(bin, 'claude');
  writeFileSync(program, `#!/bin/sh\nexec ${[interpreterOf(script), join(fixtures, script), ...args].map(shellQuote).join(' ')} "$@"\n`);
  chmodSync(program, 0o755);
  // Unquoted: the daemon tells the agent's kind from the program's name (temp paths hold no spaces).
  return `${program} -p --output-format stream-json --verbose`;
}

export interface RunsUnderTest {
  readonly runs: ComputerRuns;
  readonly system: ActorSystem;
  readonly workspaceRoot: string;
  /** What the computer does once the board granted a claim: remember the token, hand the run over. */
  claimAndHandOver(runId: string): Promise<void>;
  /** Stops it the way a killed daemon stops: no more effects, no more writes, processes left running. */
  crash(): void;
}

/**
 * One computer's claimed runs (`c1`) on a real log, talking to a stand-in board. Every process
 * group it started is SIGKILLed when the test ends, whatever happened.
 */
export async function startRuns(
  store: EventStore,
  clock: Clock,
  board: StandInBoard,
  options: Partial<Omit<ComputerRunsOptions, 'system' | 'store' | 'clock' | 'board'>> & { exec: string },
): Promise<RunsUnderTest> {
  const system = startActorSystem({ onError: () => {} });
  const workspaceRoot = options.workspaceRoot ?? tempDir();
  const runs = new ComputerRuns({
    system,
    store,
    clock,
    computer: 'c1',
    workspaceRoot,
    heartbeatMs: 30_000,
    killGraceMs: 5_000,
    ended: async () => {},
    ...options,
    board,
  });
  await runs.start();
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    runs.stop();
    stopSystem(system);
  };
  onTestFinished(async () => {
    stop();
    runs.killAll();
    await killEveryGroup(store);
  });
  return {
    runs,
    system,
    workspaceRoot,
    async claimAndHandOver(runId) {
      const answer = await board.claim(runId);
      const body = answer.body as { run: { lane: string; prompt: string; timeout_s: number | null }; run_token: string };
      runs.rememberToken(runId, body.run_token);
      await runs.claimed(await recordClaimed(store, runs, runId, body.run.lane, body.run.timeout_s, clock.now()), body.run.prompt);
    },
    crash: stop,
  };
}

/**
 * Records the queue's decisions up to a granted run's `run.claimed` as its queue makes them (no queue
 * here: queued, claim started, claimed), in its lane's stream, the claim carrying what the host reads
 * for its start. The run actor starts the run from it.
 */
export async function recordClaimed(
  store: EventStore,
  runs: ComputerRuns,
  runId: string,
  lane: string,
  timeoutS: number | null,
  at: number,
  computer = 'c1',
): Promise<Extract<DomainEvent, { type: 'run.claimed' }>> {
  const stream = `${computer}/lane:${lane}`;
  const data = { runId, lane, skills: [], start: runs.startOf(lane, timeoutS) };
  const arrival = await store.headSeq();
  // A test that wrote the claim's start itself (its life, say) keeps it.
  const started = (await store.readStream(stream)).some((e) => e.type === 'run.claim.started' && e.data.runId === runId);
  const before: NewDomainEvent[] = started
    ? []
    : [
        { stream, type: 'run.queued', data: { runId, lane, agentId: null, arrival }, at },
        { stream, type: 'run.claim.started', data: { runId, attempt: 1 }, at },
      ];
  const result = await store.append({
    expected: { [stream]: await store.streamVersion(stream) },
    events: [...before, { stream, type: 'run.claimed', data, at }],
  });
  if (!result.ok) throw result.conflict;
  return result.events.at(-1) as Extract<DomainEvent, { type: 'run.claimed' }>;
}

/** SIGKILLs every process group any run of the log began: nothing a test started outlives it. */
export async function killEveryGroup(store: EventStore): Promise<void> {
  let events: DomainEvent[];
  try {
    events = await store.readAll(0, 1_000_000);
  } catch {
    return;
  }
  for (const event of events) {
    if (event.type !== 'run.process.began') continue;
    try {
      process.kill(-event.data.pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}

export function runStream(runId: string, computer = 'c1'): string {
  return `${computer}/run:${runId}`;
}

/** The types of a run's events so far. */
export async function typesOf(store: EventStore, runId: string): Promise<string[]> {
  return (await store.readStream(runStream(runId))).map((e) => e.type);
}

/** The first event of `type` in the run's stream, once it is there (bounded, real time: processes are real). */
export async function waitForEvent<T extends DomainEvent['type']>(
  store: EventStore,
  runId: string,
  type: T,
  timeout = 10_000,
): Promise<Extract<DomainEvent, { type: T }>> {
  return vi.waitFor(
    async () => {
      const found = (await store.readStream(runStream(runId))).find((e) => e.type === type);
      if (!found) throw new Error(`no ${type} in ${runStream(runId)} yet`);
      return found as Extract<DomainEvent, { type: T }>;
    },
    { timeout, interval: 20 },
  );
}
