import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { type LocalTurnOptions, type LocalTurnResult, rememberedSession, startLocalTurn } from '../../apps/computer/localTurn.ts';
import { computerLockPath, takeProcessLock } from '../../apps/computer/processLock.ts';
import { isSafeId, SAFE_ID_RULE } from '../../events/idRule.ts';
import { messageOf } from '../../events/thrown.ts';
import { systemClock } from '../../runtime/actors/clock.ts';
import { openSqliteStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import type { RunOptions } from '../commands/run.ts';
import { agentToRun } from '../shared/agentProgram.ts';
import { print } from '../shared/options.ts';
import { refuseOption } from '../shared/parse.ts';
import { readPrompt } from '../shared/prompt.ts';

/** The options with the agent chosen (agentToRun): `--exec`, or the demo agent under `--demo`. */
type AgentTurn = RunOptions & { readonly exec: string };

/** Turns of `runledger run` are the daemon's own computer's: they share its lanes' sessions. */
const COMPUTER = 'local';

/**
 * `runledger run`: one turn, here and now, exactly as the daemon would run it, and the reply printed.
 * Exit 0 when the turn succeeded, 1 with the error when it did not.
 *
 * A real run is recorded as computer `local`'s turn (its own run id, no board): the lane's session
 * memory moves as it would on the daemon, and `audit` shows the turn. It therefore takes that
 * computer's lock: while `runledger daemon` runs as `local` on the same log it is refused, because two
 * writers of one computer would each keep a stale copy of its lanes' sessions.
 *
 * `--dry-run` writes nothing at all: no log (not even an empty file), no lock, no session record. It
 * also resumes nothing: resuming a session is itself a write (the agent appends the turn to that
 * session's transcript), and a later real turn would then carry on from an answer nobody saw.
 */
export async function run(o: RunOptions, command: CommandUnknownOpts): Promise<void> {
  checkLane(o.lane, command);
  // Before the prompt is read: a person typing it on stdin learns first that it would not run.
  const exec = agentToRun(o, { workspace: join(dirname(resolve(o.db)), 'workspaces', COMPUTER, o.lane), again: 'then run it again' });
  const prompt = readPrompt('run', o.prompt);
  const turn = { ...o, exec };
  const result = o.dryRun ? await dryRun(turn, prompt) : await recordedRun(turn, prompt);
  const view = {
    run_id: result.runId,
    ok: result.ok,
    reply: result.reply,
    error: result.error,
    lane_session: result.laneSession,
    recorded: !o.dryRun,
  };
  if (result.ok) print(o, view, () => result.reply ?? '');
  else if (o.json) print(o, view, () => '');
  else process.stderr.write(`runledger run: the turn failed: ${result.error}\n`);
  process.exitCode = result.ok ? 0 : 1;
}

async function recordedRun(o: AgentTurn, prompt: string): Promise<LocalTurnResult> {
  const db = resolve(o.db);
  const folder = dirname(db);
  mkdirSync(folder, { recursive: true });
  let release: () => void;
  try {
    release = takeProcessLock(computerLockPath(db, COMPUTER), `computer ${COMPUTER} on ${db}`);
  } catch (error) {
    throw new Error(`${messageOf(error)}. \`runledger run\` records its turn as that computer; use --dry-run to record nothing`);
  }
  try {
    const store = await openSqliteStore(db);
    try {
      const laneSession = await rememberedSession(store, COMPUTER, o.lane);
      return await untilDone(startLocalTurn(turnOf(o, prompt, { store, workspaceRoot: join(folder, 'workspaces', COMPUTER), laneSession })));
    } finally {
      await store.close();
    }
  } finally {
    release();
  }
}

/** The turn as the options say it, recorded in `store` (or nowhere: a dry run). */
function turnOf(o: AgentTurn, prompt: string, where: Pick<LocalTurnOptions, 'store' | 'workspaceRoot' | 'laneSession'>): LocalTurnOptions {
  return {
    ...where,
    clock: systemClock,
    computer: COMPUTER,
    runId: `turn-${randomUUID()}`,
    lane: o.lane,
    prompt,
    exec: o.exec,
    budgetS: o.timeoutS,
    budgetNote: o.budgetNote === 'on',
  };
}

async function dryRun(o: AgentTurn, prompt: string): Promise<LocalTurnResult> {
  // The lane's workspace when the daemon made one (the agent sees what earlier turns left), else a
  // scratch folder removed afterwards: nothing is created beside the log.
  const root = join(dirname(resolve(o.db)), 'workspaces', COMPUTER);
  const scratch = existsSync(join(root, o.lane)) ? null : mkdtempSync(join(tmpdir(), 'runledger-dry-run-'));
  try {
    return await untilDone(startLocalTurn(turnOf(o, prompt, { store: null, workspaceRoot: scratch ?? root, laneSession: null })));
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}

/** The turn's result; a first SIGINT or SIGTERM stops the agent (the turn ends as killed), a second exits. */
export async function untilDone(turn: ReturnType<typeof startLocalTurn>): Promise<LocalTurnResult> {
  let signals = 0;
  const onSignal = () => {
    if (++signals > 1) process.exit(130);
    turn.stop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await turn.result;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** `--lane` is checked here, where the id schema loads with the command, not at every start (../parse.ts). */
function checkLane(text: string, command: CommandUnknownOpts): void {
  if (!isSafeId(text)) refuseOption(command, '--lane <lane>', text, `--lane must match ${SAFE_ID_RULE}, not "${text}"`);
}
