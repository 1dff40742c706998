import Database from 'better-sqlite3';
import { codec } from './events/catalog.ts';
const db = new Database('/tmp/bench200k.db');
const it = db.prepare('SELECT seq, stream, version, type, data, at, cause, actor FROM events ORDER BY seq').raw(true);
const page = db.prepare('SELECT seq, stream, version, type, data, at, cause, actor FROM events WHERE seq > ? ORDER BY seq LIMIT ?').raw(true);
function time(name: string, f: () => void) { const t = performance.now(); f(); console.log(name, (performance.now() - t).toFixed(0), 'ms'); }
for (let r = 0; r < 3; r++) {
time('iterate only', () => { let n = 0; for (const row of it.iterate() as any) n++; });
time('iterate+parse', () => { for (const row of it.iterate() as any) JSON.parse(row[4]); });
time('pages only', () => { let last = 0; for (;;) { const rows = page.all(last, 2000) as any[]; if (!rows.length) break; last = rows[rows.length-1][0]; } });
time('pages+parse', () => { let last = 0; for (;;) { const rows = page.all(last, 2000) as any[]; if (!rows.length) break; for (const r of rows) JSON.parse(r[4]); last = rows[rows.length-1][0]; } });
time('pages+decodeRow', () => { let last = 0; for (;;) { const rows = page.all(last, 2000) as any[]; if (!rows.length) break; for (const r of rows) codec.decodeRow({seq:r[0],stream:r[1],version:r[2],type:r[3],data:r[4],at:r[5],cause:r[6],actor:r[7]}); last = rows[rows.length-1][0]; } });
time('iterate+decodeRow', () => { for (const r of it.iterate() as any) codec.decodeRow({seq:r[0],stream:r[1],version:r[2],type:r[3],data:r[4],at:r[5],cause:r[6],actor:r[7]}); });
}
