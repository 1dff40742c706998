/**
 * Applies scripts/layout/moves.json to a checkout: the "layers by folder" move (docs/architecture.md#layers).
 *
 *   node --import tsx scripts/layout/apply.ts [--dry-run]
 *
 * A mechanical move, made by a script rather than by hand so that it can be run again on a main that
 * moved on meanwhile: it `git mv`s each planned file, then rewrites every path that named a moved file
 * (relative imports and `new URL('./x', import.meta.url)` neighbours in every tracked source, relative
 * links in Markdown, repository paths written out in backquotes or strings), adds the new top-level
 * folders to the configurations that list them, and lets Biome sort the imports again.
 *
 * It checks before it touches anything: every planned file must be either still at its old place (to
 * move) or already at its new one (moved); a file at neither fails, naming it, and so does a file added
 * since the plan was written to a folder the plan empties (the plan must say where it goes). Run a second
 * time, it finds every file moved and does nothing.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = posix.normalize(`${dirname(fileURLToPath(import.meta.url))}/../..`);
const PLAN = 'scripts/layout/moves.json';

interface Plan {
  /** Folders the move empties: a file found there that the plan does not name stops the move. */
  readonly vacated: readonly string[];
  /** The top-level folders the product is made of after the move (tsconfig `include`, Biome's `includes`). */
  readonly productFolders: readonly string[];
  /** Files the move makes obsolete (the former import rule, by filename patterns): removed. */
  readonly retired: readonly string[];
  /** Per layer, old path → new path. */
  readonly layers: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

const git = (...args: string[]): string => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
const read = (path: string): string => readFileSync(`${ROOT}/${path}`, 'utf8');
const exists = (path: string): boolean => existsSync(`${ROOT}/${path}`);

function loadPlan(): { plan: Plan; moves: Map<string, string> } {
  const plan = JSON.parse(read(PLAN)) as Plan;
  const moves = new Map<string, string>();
  for (const [layer, files] of Object.entries(plan.layers)) {
    for (const [from, to] of Object.entries(files)) {
      if (moves.has(from)) throw new Error(`${PLAN}: ${from} is planned twice (again in ${layer})`);
      moves.set(from, to);
    }
  }
  return { plan, moves };
}

/** The files still to move; throws, naming each, when the checkout is not one the plan fits. */
function pending(plan: Plan, moves: ReadonlyMap<string, string>): [string, string][] {
  const problems: string[] = [];
  const todo: [string, string][] = [];
  for (const [from, to] of moves) {
    if (exists(from) && !exists(to)) todo.push([from, to]);
    else if (exists(from)) problems.push(`${from}: both it and its destination ${to} exist`);
    else if (!exists(to))
      problems.push(`${from}: planned to move to ${to}, but it exists at neither place (renamed or deleted since the plan: update ${PLAN})`);
  }
  const tracked = git('ls-files', '--', ...plan.vacated)
    .split('\n')
    .filter(Boolean);
  for (const file of tracked) {
    if (!moves.has(file))
      problems.push(`${file}: new in a folder the plan empties (${plan.vacated.find((f) => file.startsWith(f))}); add it to ${PLAN}`);
  }
  if (todo.length > 0 && todo.length < moves.size) {
    problems.push(
      `${moves.size - todo.length} of the ${moves.size} planned files are moved already: a half-applied plan (git checkout the tree and run again)`,
    );
  }
  if (problems.length > 0) throw new Error(`the layout plan does not fit this checkout:\n  ${problems.join('\n  ')}`);
  return todo;
}

/** Old folder → new folder, for each folder whose files all moved together (a `new URL('./static/')` names a folder). */
function folderMoves(moves: ReadonlyMap<string, string>, tracked: readonly string[]): Map<string, string> {
  const candidates = new Map<string, string | null>();
  for (const [from, to] of moves) {
    for (let dir = posix.dirname(from); dir !== '.'; dir = posix.dirname(dir)) {
      const rest = from.slice(dir.length);
      const target = to.endsWith(rest) ? to.slice(0, to.length - rest.length) : null;
      const known = candidates.get(dir);
      candidates.set(dir, known === undefined || known === target ? target : null);
    }
  }
  const folders = new Map<string, string>();
  for (const [dir, target] of candidates) {
    if (target !== null && tracked.every((file) => !file.startsWith(`${dir}/`) || moves.has(file))) folders.set(dir, target);
  }
  return folders;
}

const SOURCE = /\.(ts|mts|cts|js|mjs)$/;
const TEXT = /\.(ts|mts|cts|js|mjs|md|json|jsonc)$/;
/**
 * A relative path in a source: a specifier where a module or a neighbour is named (import/export … from,
 * import(), import '…', require(), vi.mock(), new URL(…)), or a file's path written elsewhere (a comment).
 */
const RELATIVE =
  /((?:\bfrom|\bimport|\brequire|\bvi\.mock|\bnew URL)\s*\(?\s*)(['"])(\.\.?(?:\/[^'"\n]*)?)\2|(?<![\w./-])(\.\.?\/[\w./-]+\.(?:ts|mts|js|mjs))(?!\w)/g;
/** A relative Markdown link. */
const LINK = /(\]\()(\.\.?\/[^)\s#]+|[A-Za-z][\w.-]*\/[^)\s#]*)([#)\s])/g;

function rewriter(moves: ReadonlyMap<string, string>, folders: ReadonlyMap<string, string>, tracked: ReadonlySet<string>) {
  const moved = (target: string): string | undefined => {
    const exact = moves.get(target);
    if (exact !== undefined) return exact;
    for (let dir = target; dir !== '.' && dir !== '' && dir !== '/'; dir = posix.dirname(dir)) {
      const to = folders.get(dir);
      if (to !== undefined) return to + target.slice(dir.length);
    }
    return undefined;
  };
  /** `spec`, written in a file that was at `oldFile` and is now at `newFile`, as it must read there. */
  const relink = (spec: string, oldFile: string, newFile: string): string => {
    const slash = spec.endsWith('/') && spec.length > 1 ? '/' : '';
    const target = posix.normalize(posix.join(posix.dirname(oldFile), spec)).replace(/\/$/, '');
    const newTarget = moved(target);
    // A script run from the root (`import … from './actors/…'` in a test's child process) names its
    // modules from there: a path that names nothing from the file's folder is read from the root.
    const fromRoot = spec.startsWith('./') && newTarget === undefined && !tracked.has(target) ? moved(posix.normalize(spec)) : undefined;
    if (fromRoot !== undefined) return `./${fromRoot}`;
    if (newTarget === undefined && oldFile === newFile) return spec;
    let out = posix.relative(posix.dirname(newFile), newTarget ?? target) || '.';
    if (!out.startsWith('.')) out = `./${out}`;
    return out + slash;
  };
  // Repository paths written out (`actors/runtime/outbox.ts`, 'actors/run/execution/'), longest first,
  // not preceded by a path character (so a relative path, or a new path that ends like an old one, is left alone).
  const named = [...moves.entries(), ...[...folders.entries()].map(([from, to]) => [`${from}/`, `${to}/`] as [string, string])];
  named.sort((a, b) => b[0].length - a[0].length);
  const byName = new Map(named);
  const escaped = named.map(([from]) => from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const PATHS = new RegExp(`(?<![\\w./-])(${escaped.join('|')})(?![\\w-])`, 'g');

  return (text: string, oldFile: string, newFile: string): string => {
    let out = text;
    if (SOURCE.test(newFile)) {
      out = out.replace(RELATIVE, (all, head: string | undefined, quote: string, spec: string, path: string | undefined) => {
        if (head !== undefined) return `${head}${quote}${relink(spec, oldFile, newFile)}${quote}`;
        // A path in prose is rewritten only when it names a file: a file of the tree, or one moved.
        const target = posix.normalize(posix.join(posix.dirname(oldFile), path as string));
        return tracked.has(target) || moves.has(target) ? relink(path as string, oldFile, newFile) : all;
      });
    }
    if (newFile.endsWith('.md')) {
      out = out.replace(LINK, (all, head: string, spec: string, tail: string) =>
        /^[a-z]+:/.test(spec) ? all : `${head}${relink(spec, oldFile, newFile).replace(/^\.\/(?!\.)/, spec.startsWith('./') ? './' : '')}${tail}`,
      );
    }
    return out.replace(PATHS, (path) => byName.get(path) ?? path);
  };
}

/** Puts the new top-level folders where the configurations list the product's folders. */
function listFolders(plan: Plan): string[] {
  const touched: string[] = [];
  const folders = plan.productFolders;
  for (const file of ['tsconfig.json', 'tsconfig.build.json']) {
    const text = read(file);
    const updated = text.replace(/("include":\s*\[)([^\]]*)(\])/, (_all, head: string, list: string, tail: string) => {
      const entries = list
        .split(',')
        .map((entry) => entry.trim().replace(/^"|"$/g, ''))
        .filter(Boolean);
      const others = entries.filter((entry) => !/^[a-z]+$/.test(entry) || !PRODUCT_GUESS.has(entry));
      const product = entries.includes('actors') ? folders : [];
      return `${head}${[...product, ...others].map((entry) => `"${entry}"`).join(', ')}${tail}`;
    });
    if (updated !== text) {
      writeFileSync(`${ROOT}/${file}`, updated);
      touched.push(file);
    }
  }
  const biome = read('biome.jsonc');
  const lines = biome.split('\n');
  const first = lines.findIndex((line) => /^\s*"actors\/\*\*",$/.test(line));
  if (first >= 0) {
    const indent = (lines[first] as string).match(/^\s*/)?.[0] ?? '';
    let last = first;
    while (last + 1 < lines.length && PRODUCT_GUESS.has((lines[last + 1] as string).trim().replace(/^"|\/\*\*",$/g, ''))) last++;
    const updated = [...lines.slice(0, first), ...folders.map((folder) => `${indent}"${folder}/**",`), ...lines.slice(last + 1)].join('\n');
    if (updated !== biome) {
      writeFileSync(`${ROOT}/biome.jsonc`, updated);
      touched.push('biome.jsonc');
    }
  }
  return touched;
}

/**
 * Replaces the "## Layout" section of docs/contributing.md (its prose and folder table, which name the
 * folders as they were) with scripts/layout/contributing-layout.md; says so when it cannot find it.
 */
function replaceContributingLayout(): string[] {
  const file = 'docs/contributing.md';
  const text = read(file);
  const start = text.indexOf('\n## Layout\n');
  const fence = start < 0 ? -1 : text.indexOf('\n```\n', text.indexOf('\n```', start + 1) + 4);
  if (start < 0 || fence < 0) {
    console.warn(`layout: no "## Layout" section with a folder table in ${file}; update it by hand from scripts/layout/contributing-layout.md`);
    return [];
  }
  writeFileSync(`${ROOT}/${file}`, `${text.slice(0, start + 1)}${read('scripts/layout/contributing-layout.md').trimEnd()}${text.slice(fence + 4)}`);
  return [file];
}

/** The folders the product was made of before the move, and after: what the configurations' lists are recognised by. */
const PRODUCT_GUESS = new Set(['actors', 'events', 'projections', 'wire', 'replay', 'web', 'cli', 'runtime', 'adapters', 'apps']);

function main(): void {
  const dryRun = process.argv.includes('--dry-run');
  const { plan, moves } = loadPlan();
  const todo = pending(plan, moves);
  const retired = plan.retired.filter(exists);
  if (todo.length === 0 && retired.length === 0) {
    console.log(`layout: all ${moves.size} planned files are in place already; nothing to do`);
    return;
  }
  const tracked = git('ls-files').split('\n').filter(Boolean);
  const folders = folderMoves(moves, tracked);
  const rewrite = rewriter(moves, folders, new Set(tracked));
  const texts = tracked.filter(
    (file) => TEXT.test(file) && !file.startsWith('scripts/layout/') && file !== 'package-lock.json' && !retired.includes(file) && exists(file),
  );
  if (dryRun) {
    for (const [from, to] of todo) console.log(`${from} -> ${to}`);
    for (const file of retired) console.log(`${file} removed`);
    return;
  }
  if (retired.length > 0) git('rm', '-q', ...retired);
  // Read every text at its old place, move, then write each at its new place.
  const before = new Map(texts.map((file) => [file, read(file)]));
  for (const [from, to] of todo) {
    execFileSync('mkdir', ['-p', posix.dirname(`${ROOT}/${to}`)]);
    git('mv', from, to);
  }
  const changed: string[] = [];
  for (const [oldFile, text] of before) {
    const newFile = moves.get(oldFile) ?? oldFile;
    const updated = rewrite(text, oldFile, newFile);
    if (updated !== text) {
      writeFileSync(`${ROOT}/${newFile}`, updated);
      changed.push(newFile);
    }
  }
  changed.push(...listFolders(plan), ...replaceContributingLayout());
  const biomeable = changed.filter((file) => /\.(ts|mts|js|mjs|json|jsonc)$/.test(file));
  execFileSync('npx', ['biome', 'check', '--write', '--no-errors-on-unmatched', ...biomeable], { cwd: ROOT, stdio: 'inherit' });
  console.log(`layout: moved ${todo.length} files, rewrote paths in ${changed.length} files`);
}

main();
