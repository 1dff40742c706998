#!/usr/bin/env node
// The agent `npm start` runs: reads its prompt on stdin, thinks for a moment, answers. A stand-in for
// `claude -p --output-format stream-json` or `codex exec --json`, so a new user sees real turns.
let prompt = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => (prompt += chunk));
process.stdin.on('end', () => {
  const ask = prompt.trim().split('\n').pop() ?? '';
  const session = process.env.RUNLEDGER_SESSION_ID;
  const ms = 500 + Math.floor(Math.random() * 1500);
  setTimeout(() => {
    process.stdout.write(`${session ? `(resuming ${session}) ` : ''}You asked: "${ask.slice(0, 80)}". Done in ${ms} ms.\n`);
  }, ms);
});
