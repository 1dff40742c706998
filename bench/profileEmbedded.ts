/**
 * The embedded daemon's CPU profile under the throughput bench's load (issue 16): `runledger daemon`
 * (`--slots 8`, a no-op agent `true`) runs in a child process, profiled from inside by the inspector,
 * while this process submits the runs over 40 lanes, so that every sample is the daemon's. Prints
 * where the loop's time goes by area and the top functions by self time (bench/cpuProfileSummary.ts);
 * the raw profile is kept for Chrome DevTools.
 *
 *   node --import tsx bench/profileEmbedded.ts [--runs N] [--rounds R] [--out FILE.md]
 *
 * With `--rounds R` the profile is taken R times (R × N runs, one daemon) and the tables are of the
 * round with the median wall time; `npm run bench` does not run it.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CpuProfile, markdown, summarise } from './cpuProfileSummary.ts';
import { loadDriver, startEmbedded } from './embeddedLoad.ts';
import { benchDir, cleanUp, runIfMain } from './harness.ts';

const SAMPLING_US = 500;

type Command = { readonly do: 'start' } | { readonly do: 'stop'; readonly file: string } | { readonly do: 'close' };
type Reply = { readonly url: string; readonly token: string } | { readonly done: string; readonly cpuMs?: number };

/** The child: the daemon, and a profiler it starts and stops on the parent's word. */
async function daemonSide(): Promise<void> {
  const embedded = await startEmbedded('profile', { slots: 8 });
  const token = readFileSync(join(embedded.db, '..', 'token'), 'utf8').trim();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: SAMPLING_US });
  const reply = (r: Reply) => process.send!(r);
  let cpuAtStart = process.cpuUsage();
  process.on('message', async (command: Command) => {
    if (command.do === 'start') {
      await session.post('Profiler.start');
      cpuAtStart = process.cpuUsage();
      reply({ done: 'start' });
    } else if (command.do === 'stop') {
      // The daemon's CPU (user + system, all its threads) over the round: far less moved by other
      // processes on the machine than its wall time is.
      const used = process.cpuUsage(cpuAtStart);
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(command.file, JSON.stringify(profile));
      reply({ done: 'stop', cpuMs: (used.user + used.system) / 1000 });
    } else {
      session.disconnect();
      await embedded.close();
      cleanUp();
      process.exit(0);
    }
  });
  reply({ url: embedded.url, token });
}

function ask(child: ChildProcess, command: Command): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`the profiled daemon exited (${code}) before answering ${command.do}`));
    child.once('exit', onExit);
    child.once('message', (reply: Reply) => {
      child.off('exit', onExit);
      resolve(reply);
    });
    child.send(command);
  });
}

function option(argv: readonly string[], name: string, fallback: string): string {
  const at = argv.indexOf(name);
  return at >= 0 && argv[at + 1] !== undefined ? argv[at + 1]! : fallback;
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--daemon')) {
    await daemonSide();
    return new Promise(() => {}); // lives until the parent says close
  }
  const runs = Number(option(argv, '--runs', '1000'));
  const rounds = Number(option(argv, '--rounds', '3'));
  const out = option(argv, '--out', '');
  const child = fork(fileURLToPath(import.meta.url), ['--daemon'], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  try {
    const ready = await new Promise<Reply>((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', (code) => reject(new Error(`the profiled daemon exited (${code}) before it listened`)));
    });
    if (!('url' in ready)) throw new Error('the profiled daemon answered before it listened');
    const load = loadDriver(ready.url, ready.token);
    await load(100); // warm-up: code compiled, lanes known
    const taken: { file: string; s: number; cpuMs: number }[] = [];
    for (let round = 0; round < rounds; round++) {
      const file = join(benchDir(), `embedded-${round}.cpuprofile`);
      await ask(child, { do: 'start' });
      const s = await load(runs);
      const stopped = await ask(child, { do: 'stop', file });
      const cpuMs = 'cpuMs' in stopped ? (stopped.cpuMs ?? 0) : 0;
      taken.push({ file, s, cpuMs });
      process.stderr.write(
        `  round ${round + 1}: ${runs} runs in ${s.toFixed(2)} s (${(runs / s).toFixed(0)} runs/s), daemon CPU ${(cpuMs / runs).toFixed(2)} ms a run\n`,
      );
    }
    const median = [...taken].sort((a, b) => a.s - b.s)[Math.floor(taken.length / 2)]!;
    const profile = JSON.parse(readFileSync(median.file, 'utf8')) as CpuProfile;
    const kept = join(tmpdir(), `runledger-embedded-${process.pid}.cpuprofile`);
    writeFileSync(kept, JSON.stringify(profile));
    const table = [
      `embedded daemon profile (--slots 8, no-op agent, ${runs} runs a round over 40 lanes, median of ${rounds} rounds, sampled every ${SAMPLING_US} µs)`,
      `rounds: ${taken.map((t) => `${(runs / t.s).toFixed(0)}`).join(', ')} runs/s; daemon CPU a run (user + system): ${taken.map((t) => (t.cpuMs / runs).toFixed(2)).join(', ')} ms; load average ${loadavg()[0]!.toFixed(2)}; raw profile: ${kept}`,
      '',
      markdown(summarise(profile), runs),
    ].join('\n');
    console.log(table);
    if (out) writeFileSync(out, `${table}\n`);
    return 0;
  } finally {
    if (child.exitCode === null) await ask(child, { do: 'close' }).catch(() => {});
    cleanUp();
  }
}

runIfMain(import.meta.url, main);
