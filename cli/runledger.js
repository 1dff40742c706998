#!/usr/bin/env node
// The entry point: runs the JavaScript that `npm run build` compiled from the sources into dist/
// (`npm ci` builds it, through the `prepare` script). Compiling at every start cost ~1.5 s.
//
// In a checkout whose sources changed since that build (an edit, a `git pull`), running dist/ would run
// the old code without a word: a quick look at modification times (a few ms) sends it to the build,
// which compares the sources' fingerprint and rebuilds only what really changed (under a second, said on stderr).
//
// That look belongs to a checkout only: one is known by build.ts beside this folder. An installed
// package (`npm install -g`) ships dist/ built and neither build.ts nor the sources nor the compiler,
// so it runs dist/ as it is and never tries to build.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const main = new URL('../dist/cli/main.js', import.meta.url);
const builder = `${root}build.ts`;

/** The newest modification time among the files the build reads (tsconfig.build.json names the folders). */
function newestInput() {
  const folders = JSON.parse(readFileSync(`${root}tsconfig.build.json`, 'utf8')).include;
  let newest = 0;
  for (const file of ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'build.ts'])
    newest = Math.max(newest, statSync(`${root}${file}`).mtimeMs);
  for (const folder of folders) {
    for (const entry of readdirSync(`${root}${folder}`, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) newest = Math.max(newest, statSync(`${entry.parentPath}/${entry.name}`).mtimeMs);
    }
  }
  return newest;
}

const fingerprint = `${root}dist/.inputs`;
const checkout = existsSync(builder);
if (checkout && (!existsSync(fingerprint) || newestInput() > statSync(fingerprint).mtimeMs)) {
  const built = spawnSync(process.execPath, ['--import', 'tsx', builder, '--if-stale'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (built.status !== 0) {
    process.stderr.write('runledger: the sources changed since dist/ was built, and building them failed (above): fix it, or run `npm run build`\n');
    process.exit(2);
  }
}
if (!existsSync(main)) {
  process.stderr.write(
    checkout
      ? 'runledger: not built (no dist/cli/main.js): run `npm run build` here (`npm ci` runs it)\n'
      : `runledger: this installation in ${root} has no dist/cli/main.js (a package packed without its build): install runledger again from a package made by \`npm pack\`\n`,
  );
  process.exit(2);
}
await import(main.href);
