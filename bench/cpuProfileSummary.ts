/**
 * A V8 CPU profile (the inspector's `Profiler.stop`, or a `node --cpu-prof` file) summed into the tables
 * issue 16 asks for: the top functions by self time, and where the loop's time goes by area.
 *
 * A sample is charged to an area by its nearest frame, from the leaf up, that names one (a native
 * `run` called from the SQLite store is the store's; a zod parse called from the HTTP API is zod's):
 * so the areas split self time, they add up to the whole, and idle is the loop waiting.
 */

export interface CpuProfileNode {
  readonly id: number;
  readonly callFrame: {
    readonly functionName: string;
    readonly url: string;
    readonly lineNumber: number;
  };
  readonly hitCount?: number;
  readonly children?: readonly number[];
}

export interface CpuProfile {
  readonly nodes: readonly CpuProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples?: readonly number[];
  readonly timeDeltas?: readonly number[];
}

type Frame = CpuProfileNode['callFrame'];

/** Areas, first match wins per frame; a frame matching none passes the sample to its caller. */
const AREAS: readonly (readonly [string, (f: Frame) => boolean])[] = [
  ['idle', (f) => f.functionName === '(idle)'],
  ['GC', (f) => f.functionName === '(garbage collector)'],
  ['zod validation', (f) => f.url.includes('/node_modules/zod/')],
  // JSON.parse and JSON.stringify are builtins: no URL, their bare names.
  ['JSON', (f) => f.url === '' && /^(stringify|parse)$/.test(f.functionName)],
  ['store (SQLite; fsync on the main thread)', (f) => /\/node_modules\/better-sqlite3\/|\/(events|runtime)\/store\//.test(f.url)],
  ['child processes', (f) => /child_process/.test(f.url)],
  ['tokens (HMAC)', (f) => /\/(wire|adapters\/http)\/tokens\.ts|node:crypto|internal\/crypto/.test(f.url)],
  [
    'HTTP + ws',
    (f) => /\/node_modules\/ws\/|_http_|node:http|internal\/http|\/wire\/|\/adapters\/(http|push)\/|\/board\/host\/(httpApi|pushHub)/.test(f.url),
  ],
  ['sockets, streams', (f) => /node:net|internal\/stream|internal\/net|stream_base|node:stream|internal\/streams/.test(f.url)],
  ['nact mailboxes, runtime', (f) => /\/node_modules\/nact\/|\/actors\/runtime\/|\/runtime\/actors\//.test(f.url)],
  ['logging (pino)', (f) => /\/node_modules\/(pino|sonic-boom|thread-stream)\//.test(f.url)],
  ['events: codec, fold', (f) => /\/events\//.test(f.url)],
  ['projections', (f) => /\/projections\//.test(f.url)],
  ['actors (decide, evolve, shells)', (f) => /\/(actors|apps)\//.test(f.url)],
  ['tsx loader', (f) => /\/node_modules\/tsx\//.test(f.url)],
  ['timers, promises, node internals', (f) => f.url.startsWith('node:') || f.url.startsWith('internal/')],
];
const OTHER = 'other (native, program)';

export interface Summary {
  readonly wallMs: number;
  readonly busyMs: number;
  readonly top: readonly { readonly fn: string; readonly where: string; readonly ms: number }[];
  readonly areas: readonly { readonly area: string; readonly ms: number }[];
  /** Self time charged to the nearest runledger file from the leaf up: which of our modules the time is spent for. */
  readonly files: readonly { readonly file: string; readonly ms: number }[];
}

export function summarise(profile: CpuProfile, topN = 25): Summary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Time per node: the sampled deltas when present (exact), else hit counts over the mean interval.
  const selfUs = new Map<number, number>();
  if (profile.samples && profile.timeDeltas) {
    for (let i = 0; i < profile.samples.length; i++) {
      // A delta is the time before sample i: charged to the sample it ends on, as Chrome DevTools does.
      const id = profile.samples[i]!;
      selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, profile.timeDeltas[i + 1] ?? 0));
    }
  } else {
    const hits = profile.nodes.reduce((s, n) => s + (n.hitCount ?? 0), 0);
    const per = (profile.endTime - profile.startTime) / Math.max(1, hits);
    for (const n of profile.nodes) selfUs.set(n.id, (n.hitCount ?? 0) * per);
  }
  const areaOf = (id: number): string => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      for (const [area, matches] of AREAS) if (matches(frame)) return area;
    }
    return OTHER;
  };
  const ownFileOf = (id: number): string => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const url = byId.get(at)!.callFrame.url;
      if (url.startsWith('file://') && !url.includes('/node_modules/')) return shortUrl(url);
    }
    return '(no runledger frame: idle, GC, node internals)';
  };
  const files = new Map<string, number>();
  const fns = new Map<string, { fn: string; where: string; ms: number }>();
  const areas = new Map<string, number>();
  for (const [id, us] of selfUs) {
    if (us === 0) continue;
    const f = byId.get(id)!.callFrame;
    // Lines are of the code tsx generated, not the source: a hint for anonymous functions only.
    const where = f.url ? `${shortUrl(f.url)}:${f.lineNumber + 1}` : '(native)';
    const key = `${f.functionName}@${where}`;
    const entry = fns.get(key) ?? { fn: f.functionName || '(anonymous)', where, ms: 0 };
    entry.ms += us / 1000;
    fns.set(key, entry);
    const area = areaOf(id);
    areas.set(area, (areas.get(area) ?? 0) + us / 1000);
    const file = ownFileOf(id);
    files.set(file, (files.get(file) ?? 0) + us / 1000);
  }
  const wallMs = (profile.endTime - profile.startTime) / 1000;
  const idle = areas.get('idle') ?? 0;
  return {
    wallMs,
    busyMs: wallMs - idle,
    top: [...fns.values()]
      .filter((f) => f.fn !== '(idle)')
      .sort((a, b) => b.ms - a.ms)
      .slice(0, topN),
    areas: [...areas].map(([area, ms]) => ({ area, ms })).sort((a, b) => b.ms - a.ms),
    files: [...files]
      .map(([file, ms]) => ({ file, ms }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, topN),
  };
}

/** The two tables in Markdown: areas (share of wall and of busy time) and top self-time functions. */
export function markdown(s: Summary, runs: number): string {
  const pct = (ms: number, of: number) => `${((100 * ms) / of).toFixed(1)}%`;
  const lines = [
    `wall ${(s.wallMs / 1000).toFixed(2)} s for ${runs} runs (${(runs / (s.wallMs / 1000)).toFixed(0)} runs/s under the profiler), busy ${pct(s.busyMs, s.wallMs)} of it, ${(s.busyMs / runs).toFixed(2)} ms busy a run`,
    '',
    '| area (self time, nearest frame that names one) | ms | of wall | of busy |',
    '|---|---:|---:|---:|',
    ...s.areas.map((a) => `| ${a.area} | ${a.ms.toFixed(0)} | ${pct(a.ms, s.wallMs)} | ${a.area === 'idle' ? '' : pct(a.ms, s.busyMs)} |`),
    '',
    '| function (self time) | where | ms | of busy |',
    '|---|---|---:|---:|',
    ...s.top.map((f) => `| ${f.fn} | ${f.where} | ${f.ms.toFixed(0)} | ${pct(f.ms, s.busyMs)} |`),
    '',
    '| runledger file (nearest own frame from the leaf) | ms | of busy |',
    '|---|---:|---:|',
    ...s.files.map((f) => `| ${f.file} | ${f.ms.toFixed(0)} | ${pct(f.ms, s.busyMs)} |`),
  ];
  return lines.join('\n');
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) return url.slice(modules + '/node_modules/'.length);
  const repo = url.match(/\/(actors|bench|events|wire|projections|web|cli|replay)\/.*/);
  return repo ? repo[0].slice(1) : url.replace(/^file:\/\//, '');
}
