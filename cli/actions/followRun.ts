import WebSocket from 'ws';
import { isTerminal, type RunState } from '../../actors/board/boardState.ts';
import { usageWords } from '../../events/usageWords.ts';
import { type UsageBody, usageFromWire } from '../../events/wire/usage.ts';
import type { ShowOptions } from '../commands/client.ts';
import { boardCall, refusal, tokenRefused } from '../shared/boardCall.ts';
import { print } from '../shared/options.ts';

/** A socket that closes before the run ended is opened again this many times in a row, a second apart. */
const RECONNECTS = 30;
const RECONNECT_MS = 1_000;

interface Seen {
  state: string | null;
  progress: string | null;
}

/**
 * `runledger show --follow RUN`: a line per change of the run (its state, and what its agent is doing,
 * the heartbeats' `progress`), until it is terminal; then its reply and how it ended (with --json, the
 * run as the board has it). It follows the same live socket as the run's web page (`/v1/live?run=ID`),
 * so a change is printed as the board hears it, not at a polling interval. Exit 0 when the run
 * succeeded, 1 when it ended otherwise.
 */
export async function followRun(runId: string, o: ShowOptions): Promise<void> {
  const seen: Seen = { state: null, progress: null };
  const line = (value: Record<string, unknown>, human: string) => print(o, value, () => `${clock(Date.now())}  ${human}`);
  let failures = 0;
  for (;;) {
    const ended = await followOnce(runId, o, seen, line).then(
      (result) => {
        failures = 0;
        return result;
      },
      (error: unknown) => {
        if (error instanceof Refused || ++failures > RECONNECTS) throw error;
        return false;
      },
    );
    if (ended) break;
    await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
  }
  const answer = await boardCall(o, 'GET', `/v1/runs/${encodeURIComponent(runId)}`);
  if (answer.status !== 200) throw new Error(refusal(answer));
  const view = answer.body ?? {};
  const state = String(view.state);
  // Its reply (what a person followed it for) ahead of the line that says how it ended: that one stays last.
  const reply = typeof view.reply === 'string' && view.reply.trim() !== '' ? `\nreply:\n${view.reply.replace(/\n+$/, '')}\n\n` : '';
  print(o, { type: 'end', ...view }, () => `${reply}${endLine(runId, view)}`);
  process.exitCode = state === 'succeeded' ? 0 : 1;
}

/** A refusal no reconnect can mend (a token refused, no such run): said, exit 2. */
class Refused extends Error {}

/** One connection: true once the run is terminal, false when the socket closed before that. */
function followOnce(runId: string, o: ShowOptions, seen: Seen, line: (value: Record<string, unknown>, human: string) => void): Promise<boolean> {
  const url = new URL(`${o.server}/v1/live?run=${encodeURIComponent(runId)}`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  // Reads need a token only off loopback, as with `show`: the one given with --token.
  const ws = new WebSocket(url, o.token ? { headers: { authorization: `Bearer ${o.token}` } } : {});
  return new Promise<boolean>((resolve, reject) => {
    let done = false;
    const finish = (ended: boolean) => {
      done = true;
      ws.close();
      resolve(ended);
    };
    ws.on('unexpected-response', (_request, response) => {
      done = true;
      const status = response.statusCode ?? 0;
      response.resume();
      // A 5xx or a 429 is a board (or the proxy before it) that cannot answer now, a restart: tried
      // again like a closed socket. What the board refused (a token, an id, an origin) stays refused.
      const said = `the board at ${o.server} refused to follow run ${runId}: HTTP ${status}`;
      if (status === 401) reject(new Refused(tokenRefused(o, o.token ?? null)));
      else reject(status >= 500 || status === 429 ? new Error(said) : new Refused(said));
    });
    ws.on('error', (error) => {
      if (!done) reject(new Error(`the board at ${o.server} did not answer (${error.message}): is \`runledger daemon\` running?`));
      done = true;
    });
    ws.on('close', () => {
      if (!done) resolve(false);
      done = true;
    });
    ws.on('message', (data) => {
      const message = parse(String(data));
      if (message === null || message.runId !== runId) return;
      const record = message.record as { state?: string | null; computer?: string | null } | undefined;
      if (record?.state && record.state !== seen.state) {
        seen.state = record.state;
        line({ type: 'state', run_id: runId, state: record.state }, `${record.state}${record.computer ? ` on ${record.computer}` : ''}`);
      }
      if (message.type === 'hello' || message.type === 'progress') {
        const progress = (message.progress as { text?: string } | null | undefined)?.text ?? null;
        if (progress !== null && progress !== seen.progress) {
          seen.progress = progress;
          line({ type: 'progress', run_id: runId, progress }, progress);
        }
      }
      if (seen.state !== null && isTerminal(seen.state as RunState)) finish(true);
    });
  });
}

function endLine(runId: string, view: Record<string, unknown>): string {
  const usage = usageFromWire(view.usage as UsageBody | undefined);
  const words = usage ? usageWords(usage) : '';
  const error = typeof view.error === 'string' ? `: ${view.error.split('\n', 1)[0]}` : '';
  return `run ${runId} ended ${String(view.state)}${error}${words ? ` (${words})` : ''}`;
}

function parse(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : null;
  } catch {
    // Not JSON: no message of the board's.
    return null;
  }
}

function clock(at: number): string {
  return new Date(at).toISOString().slice(11, 19);
}
