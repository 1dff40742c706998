#!/usr/bin/env node
// The published entry point: runs the JavaScript that `npm run build` compiled from the sources into
// dist/ (`npm ci` builds it, through the `prepare` script). Compiling at every start cost ~1.5 s.
import { existsSync } from 'node:fs';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('runledger: not built (no dist/cli/main.js): run `npm run build` here (`npm ci` runs it)\n');
  process.exit(2);
}
await import(main.href);
