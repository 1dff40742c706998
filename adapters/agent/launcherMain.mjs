// The agent launcher: a bare Node process (no TypeScript loader, none of the daemon's modules) that
// forks the agent commands of one daemon and relays their output to it over the IPC channel.
//
// Why a process of its own: libuv forks (it cannot vfork on Linux), and a fork copies the page
// tables of the whole parent, which the child then tears down again at exec. From a daemon holding
// its log, actors and projections that cost more CPU than the rest of a short run, and it blocked the
// daemon's event loop until the child had exec'd. Forking from this small process costs a fraction,
// and off the daemon's loop. Plain JavaScript on purpose: loading the TypeScript loader here would
// bring back the memory it exists to avoid.
//
// Protocol (JSON over the channel; `adapters/agent/launcher.ts` is the other end):
//   in:  { op: 'spawn', id, command, cwd, env, prompt }   env: overlay; a null value removes the name
//        { op: 'close-output', id }                       stop waiting for output a leftover holds open
//   out: { id, kind: 'spawned', pid, startTicks } | { id, kind: 'failed', message }
//        { id, kind: 'stdout' | 'stderr', data } | { id, kind: 'exit', code, signal } | { id, kind: 'close' }
// Signals are not relayed: the daemon signals an agent's process group itself (the group id is the pid).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Messages of one stream handed to the channel and not yet written: above this, its output waits. */
const UNSENT_HIGH = 32;

// The daemon's environment, copied once: every read of process.env goes through a C++ interceptor.
// The daemon passed its own NODE_OPTIONS aside so that this process ran without them; agents get them.
const daemonEnv = { ...process.env };
if ('RUNLEDGER_DAEMON_NODE_OPTIONS' in daemonEnv) {
  daemonEnv.NODE_OPTIONS = daemonEnv.RUNLEDGER_DAEMON_NODE_OPTIONS;
  if (!daemonEnv.NODE_OPTIONS) delete daemonEnv.NODE_OPTIONS;
  delete daemonEnv.RUNLEDGER_DAEMON_NODE_OPTIONS;
}

const agents = new Map();

function post(message) {
  if (process.connected) process.send(message);
}

function environment(overlay) {
  const env = { ...daemonEnv };
  for (const [name, value] of Object.entries(overlay ?? {})) {
    if (value === null) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** Relays one output stream, pausing it while the channel has too much of it unwritten. */
function relay(id, kind, stream) {
  stream.setEncoding('utf8');
  let unsent = 0;
  stream.on('data', (data) => {
    if (!process.connected) return;
    unsent++;
    process.send({ id, kind, data }, undefined, {}, () => {
      unsent--;
      if (unsent < UNSENT_HIGH / 2 && stream.isPaused()) stream.resume();
    });
    if (unsent >= UNSENT_HIGH) stream.pause();
  });
}

function start({ id, command, cwd, env, prompt }) {
  let child;
  try {
    // detached: the shell leads a new process group (and session), so the daemon can signal the group
    // as one, grandchildren included.
    child = spawn('/bin/sh', ['-c', command], { cwd, env: environment(env), detached: true, stdio: 'pipe' });
  } catch (error) {
    post({ id, kind: 'failed', message: error instanceof Error ? error.message : String(error) });
    return;
  }
  if (child.pid === undefined) {
    // A failed spawn reports itself through 'error' (a missing cwd, for one), and nothing else follows.
    child.once('error', (error) => post({ id, kind: 'failed', message: error.message }));
    return;
  }
  agents.set(id, child);
  post({ id, kind: 'spawned', pid: child.pid, startTicks: startTicksOf(child.pid) });
  child.stdin.on('error', () => {
    // EPIPE: the command exited (or closed stdin) without reading the whole prompt; its exit says the rest.
  });
  child.stdin.end(prompt);
  relay(id, 'stdout', child.stdout);
  relay(id, 'stderr', child.stderr);
  child.on('exit', (code, signal) => post({ id, kind: 'exit', code, signal }));
  child.on('close', () => {
    agents.delete(id);
    post({ id, kind: 'close' });
  });
}

/**
 * When the process `pid` started, in clock ticks since boot (`/proc/<pid>/stat` field 22), or 0 where
 * /proc cannot tell. Read as soon as it is spawned: even an agent over already is a zombie until this
 * loop reaps it, and its start bounds the sweep for what it left (adapters/agent/strays.ts).
 */
function startTicksOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]) || 0;
  } catch {
    return 0;
  }
}

process.on('message', (message) => {
  if (message?.op === 'spawn') start(message);
  else if (message?.op === 'close-output') {
    const child = agents.get(message.id);
    child?.stdout.destroy();
    child?.stderr.destroy();
  }
});

// The daemon is gone (ended or killed): so is whatever read the agents' output. They run on, as they
// would have had the daemon forked them itself; the daemon's restart deals with them.
process.on('disconnect', () => process.exit(0));
