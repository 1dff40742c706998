import { openSqliteStore } from './events/store/sqlite/sqliteEventStore.ts';
import { replayLog } from './actors/replay/replayLog.ts';
import { deciders } from './actors/registry.ts';
const store = await openSqliteStore('/tmp/bench200k.db');
const raw = () => { let k = 0; for (const row of store.db.prepare('SELECT seq, stream, version, type, data, at, cause, actor FROM events ORDER BY seq').raw(true).iterate() as any) { JSON.parse(row[4]); k++; } };
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const ratios: number[] = [];
for (let i = 0; i < Number(process.argv[2] ?? 6); i++) {
  (globalThis as any).gc?.();
  let t = cpu(); let w = performance.now(); await replayLog(store, deciders); const a = cpu() - t; const aw = performance.now() - w;
  (globalThis as any).gc?.();
  t = cpu(); w = performance.now(); raw(); const b = cpu() - t; const bw = performance.now() - w;
  ratios.push(b / a);
  console.log(`replay cpu ${a.toFixed(0)} (wall ${aw.toFixed(0)}) raw cpu ${b.toFixed(0)} (wall ${bw.toFixed(0)}) ratio ${(b / a).toFixed(2)}`);
}
ratios.sort(); console.log('median', ratios[ratios.length >> 1].toFixed(2));
await store.close();
