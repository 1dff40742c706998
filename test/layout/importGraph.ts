import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { build, type Plugin } from 'esbuild';

/**
 * The import graph of the production code as it runs. esbuild parses TypeScript as the ecosystem does
 * and, with `verbatimModuleSyntax` from tsconfig.json, erases exactly the `import type`s Node never
 * loads: an edge here is a module that is loaded when its importer is, which is what "pure" is about
 * (a type imported from the store is fine; a function that reaches SQLite is not).
 */
export interface Edge {
  /** A source file relative to the root (`actors/lane/decideQueue.ts`), or an external specifier (`node:fs`, `zod`). */
  readonly to: string;
  readonly external: boolean;
}

export type Graph = ReadonlyMap<string, readonly Edge[]>;

/** The folders the product is made of: tsconfig.build.json's `include`, the one list of them (`test/` and `bench/` may import anything). */
export function productionFolders(root: string): string[] {
  return (JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')) as { include: string[] }).include;
}

/** Served to browsers as files, never imported by Node: not part of the module graph. */
const NOT_MODULES = new Set(['web/static']);

/** Every source file of the production folders, relative to `root`, sorted. */
export function productionSources(root: string): string[] {
  const files: string[] = [];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
      const path = `${folder}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!NOT_MODULES.has(path)) walk(path);
      } else if (/\.(ts|mts|js|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) files.push(path);
    }
  };
  for (const folder of productionFolders(root)) walk(folder);
  return files.sort();
}

/**
 * One esbuild pass over all the entry points at once (one per file would take seconds): nothing is
 * written, packages stay external, and the metafile lists each input's import records. Code splitting
 * makes each module once, in a chunk the entry points share, instead of once in the bundle of every
 * entry point that reaches it: the same metafile, ~150 ms for the product's ~350 files instead of ~2 s.
 */
export async function importGraph(root: string, entryPoints: readonly string[], plugins: Plugin[] = []): Promise<Graph> {
  const { metafile } = await build({
    absWorkingDir: root,
    entryPoints: [...entryPoints],
    bundle: true,
    write: false,
    metafile: true,
    outdir: 'out',
    platform: 'node',
    format: 'esm',
    splitting: true,
    packages: 'external',
    logLevel: 'silent',
    plugins,
  });
  const graph = new Map<string, Edge[]>();
  for (const [file, input] of Object.entries(metafile.inputs)) {
    // Static and dynamic imports alike: both load the module when the importer runs.
    graph.set(
      file,
      input.imports.map((imported) => ({ to: imported.path, external: imported.external === true })),
    );
  }
  return graph;
}

/**
 * The shortest chain of imports from `entry` to a module `isForbidden` accepts, one per forbidden module
 * reached (`[entry, ..., forbidden]`); the search does not go on through a forbidden module, whose own
 * imports are its business.
 */
export function forbiddenChains(graph: Graph, entry: string, isForbidden: (edge: Edge) => boolean): string[][] {
  const cameFrom = new Map<string, string | null>([[entry, null]]);
  const chains: string[][] = [];
  const chainTo = (node: string): string[] => {
    const chain: string[] = [];
    for (let at: string | null | undefined = node; at != null; at = cameFrom.get(at)) chain.unshift(at);
    return chain;
  };
  const queue = [entry];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i] as string;
    for (const edge of graph.get(node) ?? []) {
      if (cameFrom.has(edge.to)) continue;
      cameFrom.set(edge.to, node);
      if (isForbidden(edge)) chains.push(chainTo(edge.to));
      else if (!edge.external) queue.push(edge.to);
    }
  }
  return chains;
}

/** A folder edge with the first file import (in sorted order) that makes it. */
export interface FolderEdge {
  readonly from: string;
  readonly to: string;
  readonly because: { readonly from: string; readonly to: string };
}

/** Folder A imports folder B when one of A's files imports one of B's (a folder and its subfolder are two folders). */
export function folderEdges(graph: Graph, inScope: (file: string) => boolean): FolderEdge[] {
  const edges = new Map<string, FolderEdge>();
  for (const file of [...graph.keys()].sort()) {
    if (!inScope(file)) continue;
    for (const edge of graph.get(file) ?? []) {
      if (edge.external || !inScope(edge.to)) continue;
      const from = dirname(file);
      const to = dirname(edge.to);
      const key = `${from} ${to}`;
      if (from !== to && !edges.has(key)) edges.set(key, { from, to, because: { from: file, to: edge.to } });
    }
  }
  return [...edges.values()];
}

/**
 * The cycles of a folder graph: for each strongly connected group of folders, the shortest cycle through
 * each of its edges that is not already on a cycle found before (so every edge that closes a loop shows
 * up in some reported cycle, without listing every one of the possibly many loops). Each cycle is given
 * as its edges in order, starting at its smallest folder.
 */
export function folderCycles(edges: readonly FolderEdge[]): FolderEdge[][] {
  const out = new Map<string, FolderEdge[]>();
  for (const edge of edges) out.set(edge.from, [...(out.get(edge.from) ?? []), edge]);
  const covered = new Set<FolderEdge>();
  const cycles: FolderEdge[][] = [];
  const seen = new Set<string>();
  for (const edge of [...edges].sort((a, b) => `${a.from} ${a.to}`.localeCompare(`${b.from} ${b.to}`))) {
    if (covered.has(edge)) continue;
    const back = shortestPath(out, edge.to, edge.from);
    if (back === null) continue;
    const cycle = rotateToSmallest([edge, ...back]);
    const key = cycle.map((step) => step.from).join(' ');
    for (const step of cycle) covered.add(step);
    if (!seen.has(key)) {
      seen.add(key);
      cycles.push(cycle);
    }
  }
  return cycles;
}

function shortestPath(out: ReadonlyMap<string, readonly FolderEdge[]>, from: string, to: string): FolderEdge[] | null {
  const via = new Map<string, FolderEdge | null>([[from, null]]);
  const queue = [from];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i] as string;
    if (node === to) {
      const path: FolderEdge[] = [];
      for (let step = via.get(node); step != null; step = via.get(step.from)) path.unshift(step);
      return path;
    }
    for (const edge of out.get(node) ?? []) {
      if (via.has(edge.to)) continue;
      via.set(edge.to, edge);
      queue.push(edge.to);
    }
  }
  return null;
}

function rotateToSmallest(cycle: FolderEdge[]): FolderEdge[] {
  let start = 0;
  cycle.forEach((step, i) => {
    if (step.from < (cycle[start] as FolderEdge).from) start = i;
  });
  return [...cycle.slice(start), ...cycle.slice(0, start)];
}

/** `a -> b -> c` for a chain of modules. */
export const showChain = (chain: readonly string[]): string => chain.join(' -> ');

/** A cycle as its folder path, then one file edge per step. */
export function showCycle(cycle: readonly FolderEdge[]): string {
  const path = [...cycle.map((step) => step.from), (cycle[0] as FolderEdge).from].join(' -> ');
  const steps = cycle.map((step) => `    ${step.from} -> ${step.to}: ${step.because.from} imports ${step.because.to}`);
  return [path, ...steps].join('\n');
}
