import { generateReplayLog } from './bench/replay.ts';
import { openSqliteStore } from './events/store/sqlite/sqliteEventStore.ts';
import { replayLog } from './actors/replay/replayLog.ts';
import { deciders } from './actors/registry.ts';
import { copyFileSync } from 'node:fs';
const n = Number(process.argv[2] ?? 20000);
let t = performance.now();
const { path, head, runs } = await generateReplayLog(n);
console.log('gen', head, runs, (performance.now() - t).toFixed(0), 'ms', path);
copyFileSync(path, '/tmp/bench200k.db');
const store = await openSqliteStore(path);
for (let i = 0; i < 3; i++) {
t = performance.now();
const r = await replayLog(store, deciders);
console.log('replay', (performance.now() - t).toFixed(0), 'ms', JSON.stringify(r).slice(0, 300));
t = performance.now();
let k = 0;
for (const row of store.db.prepare('SELECT seq, stream, version, type, data, at, cause, actor FROM events ORDER BY seq').raw(true).iterate() as any) { JSON.parse(row[4]); k++; }
console.log('raw', (performance.now() - t).toFixed(0), 'ms', k);
t = performance.now();
let last = 0; for (;;) { const page = store.readAllNow(last, 2000); if (!page.length) break; last = page[page.length-1].seq; }
console.log('readAll decode only', (performance.now() - t).toFixed(0), 'ms');
}
console.log('parks', store.db.prepare("select count(*) from events where type='run.parked'").pluck().get());
await store.close();
