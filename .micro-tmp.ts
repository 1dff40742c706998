import Database from 'better-sqlite3';
import { codec } from './events/catalog.ts';
const db = new Database('/tmp/bench200k.db');
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const q = (sql: string) => db.prepare(sql).raw(true);
const full = q('SELECT seq, stream, version, type, data, at, cause, actor FROM events WHERE seq > ? ORDER BY seq LIMIT ?');
const slim = q('SELECT seq, stream, type, data, at, cause FROM events WHERE seq > ? ORDER BY seq LIMIT ?');
const it = q('SELECT seq, stream, version, type, data, at, cause, actor FROM events ORDER BY seq');
function run(name: string, f: () => void) { (globalThis as any).gc?.(); const t = cpu(); f(); console.log(name.padEnd(30), (cpu() - t).toFixed(0)); }
function pages(stmt: any, chunk: number, each: (r: any) => void) { let last = 0; for (;;) { const rows = stmt.all(last, chunk) as any[]; for (const r of rows) each(r); if (rows.length < chunk) break; last = rows[rows.length - 1][0]; } }
const inputs: [number, string, unknown][] = [];
for (const r of it.iterate() as any) if (r[6] === null) inputs.push([r[0], r[3], JSON.parse(r[4])]);
for (let round = 0; round < 3; round++) {
  run('iterate+parse (baseline)', () => { for (const r of it.iterate() as any) JSON.parse(r[4]); });
  run('full chunks 256 +parse', () => pages(full, 256, (r) => JSON.parse(r[4])));
  run('full chunks 2000 +parse', () => pages(full, 2000, (r) => JSON.parse(r[4])));
  run('slim chunks 256 +parse', () => pages(slim, 256, (r) => JSON.parse(r[3])));
  run('slim chunks 1000 +parse', () => pages(slim, 1000, (r) => JSON.parse(r[3])));
  run(`zod on ${inputs.length} inputs`, () => { for (const [seq, type, data] of inputs) codec.decodeData(seq, type, data); });
}
const per = new Map<string, [number, number]>();
for (const [seq, type, data] of inputs) { const t = performance.now(); for (let i = 0; i < 5; i++) codec.decodeData(seq, type, data); const e = performance.now() - t; const x = per.get(type) ?? [0, 0]; per.set(type, [x[0] + e / 5, x[1] + 1]); }
for (const [t, [ms, n]] of [...per].sort((a, b) => b[1][0] - a[1][0])) console.log(t.padEnd(30), ms.toFixed(1), 'ms', n, (ms * 1000 / n).toFixed(2), 'µs each');
