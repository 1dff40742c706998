#!/usr/bin/env node
// An agent for the web view's tests: answers after the `sleep=MS` its prompt asks for (300 ms by default),
// so a test decides which turn is still open while it looks at the page. Started as `claude ...
// --output-format stream-json` (see webSupport.ts) it speaks Claude Code's events and announces a
// session (the one it is asked to `--resume`, or a new one), so the board page has sessions to show.
// `stderr=WORD` writes WORD to stderr and `exit=N` ends it with code N: a failed run with a stderr tail.
// `hold=PATH` answers once the file PATH exists (written by the test when it has seen what it needs
// of the open turn), not after a time guessed long enough: it answers "held until released".
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';

const args = process.argv.slice(2);
const streamJson = args.includes('stream-json');
const resume = args.includes('--resume') ? args[args.indexOf('--resume') + 1] : null;
let prompt = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => (prompt += chunk));
process.stdin.on('end', () => {
  const ms = Number(/sleep=(\d+)/.exec(prompt)?.[1] ?? 300);
  const session = resume ?? `session-${randomUUID().slice(0, 8)}`;
  if (streamJson) process.stdout.write(`${JSON.stringify({ type: 'system', subtype: 'init', session_id: session })}\n`);
  const stderr = /stderr=(\S+)/.exec(prompt)?.[1];
  const exit = Number(/exit=(\d+)/.exec(prompt)?.[1] ?? 0);
  if (stderr) process.stderr.write(`${stderr}\n`);
  const hold = /hold=(\S+)/.exec(prompt)?.[1];
  const answer = hold ? 'held until released' : `slept ${ms} ms`;
  const answerWhenDue = (reply) => (hold ? untilExists(hold, reply) : setTimeout(reply, ms));
  answerWhenDue(() => {
    process.stdout.write(
      streamJson
        ? `${JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: answer, session_id: session })}\n`
        : `${answer}\n`,
    );
    if (exit) process.exitCode = exit;
  });
});

/** Calls `then` once `path` exists (looked at every 20 ms: the test writes it once). */
function untilExists(path, then) {
  if (existsSync(path)) then();
  else setTimeout(() => untilExists(path, then), 20);
}
