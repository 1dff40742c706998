import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import { describe, expect, it } from 'vitest';
import {
  type Edge,
  type FolderEdge,
  folderCycles,
  folderEdges,
  forbiddenChains,
  type Graph,
  importGraph,
  productionSources,
  showChain,
  showCycle,
} from './importGraph.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The layout's dependency rules, over the graph of what runs (type-only imports are erased: a pure
 * module may name the store's types, it may not load the store).
 *
 * A pure module (a decider, a state, an event definition, a fold) holds no I/O, so `replay` can
 * re-derive every decision from the log alone and a test can run it without a world around it.
 */
const PURE: readonly RegExp[] = [
  /^actors\/.+Decider\.ts$/, // every decider
  /^actors\/(?!runtime\/)(.+\/)?(decide|evolve)[A-Z][^/]*\.ts$/, // decideQueue.ts, evolveRun.ts, ...
  /^actors\/.+State\.ts$/, // the states deciders fold
  /^actors\/runtime\/(decider|decideStep|writer)\.ts$/, // the runtime's pure part: the Decider interface, one step in memory, a writer's host:pid read
  /^events\/[^/]+\.ts$/, // the event definitions (not events/store/)
  /^projections\/.+\.ts$/, // the folds, except the modules below
];

/**
 * Files the patterns above match that are not folds, and why: each must exist (a stale entry fails).
 * Those handed a store do I/O through it without loading it, so the graph alone would pass them; they
 * are left out because what they do is read the log, not fold it.
 */
const NOT_PURE: ReadonlyMap<string, string> = new Map([
  ['projections/hydrate.ts', 'brings folds up to date from the log and the checkpoints in the store it is handed'],
  ['projections/foldLog.ts', 'reads the log from the store it is handed, to fold it'],
  ['projections/firstDifference.ts', "the snapshot check's deep comparison (node:util's isDeepStrictEqual); no fold uses it"],
  ['projections/audit/runTimeline.ts', "reads a run's events from the store"],
  ['projections/audit/runHistory.ts', 'reads the log backwards, and the runs it finds, from the store it is handed'],
  ['projections/keeper/', 'keeps the folds up to date: follows the log, saves checkpoints'],
  ['projections/snapshot/', 'checks and reads the snapshots in the store'],
]);

/**
 * Where a pure module must not reach, even through others: I/O, the store, the runtime, the adapters.
 * The runtime's `decider.ts` (the interface), `decideStep.ts` (one input through a decider, in
 * memory) and `writer.ts` (a writer's `host:pid`, read by the close claims) are its pure part: they
 * import types only, and replay steps deciders with `decideStep`.
 */
const IMPURE_FILES =
  /^(events\/store\/|actors\/runtime\/(?!(decider|decideStep|writer)\.ts$)|wire\/|web\/|cli\/|actors\/[^/]+\/(execution|host|closer|chores)\/)/;

/** Every package and builtin (`node:*`) is I/O or unknown, except the schema library. */
const PURE_PACKAGES = /^zod(\/|$)/;

const isImpure = (edge: Edge): boolean => (edge.external ? !PURE_PACKAGES.test(edge.to) : IMPURE_FILES.test(edge.to));

function isPure(file: string): boolean {
  if (!PURE.some((pattern) => pattern.test(file))) return false;
  return ![...NOT_PURE.keys()].some((exception) => (exception.endsWith('/') ? file.startsWith(exception) : file === exception));
}

/**
 * Each way a pure module reaches an impure one, as `entry -> ... -> impure`. A chain that passes
 * through another pure module is left out: that module's own chain names the same offence, closer.
 */
function purityViolations(graph: Graph, files: readonly string[]): string[] {
  const pure = files.filter(isPure);
  const violations: string[] = [];
  for (const entry of pure) {
    for (const chain of forbiddenChains(graph, entry, isImpure)) {
      if (chain.slice(1, -1).some(isPure)) continue;
      violations.push(showChain(chain));
    }
  }
  return violations;
}

/** The folders the rule is about: the production code's, each folder on its own (a subfolder is another folder). */
const isProduction = (file: string): boolean => /^(actors|events|projections|wire|replay|web|cli)\//.test(file);

/** Folder imports that close a cycle and are accepted (each must still exist: a stale one fails). None today. */
const KNOWN_FOLDER_EDGES: readonly { readonly from: string; readonly to: string }[] = [];

/** The folder graph of the production code, less the known exceptions. */
function productionFolderEdges(graph: Graph): FolderEdge[] {
  return folderEdges(graph, isProduction).filter((edge) => !KNOWN_FOLDER_EDGES.some((known) => known.from === edge.from && known.to === edge.to));
}

const productionFolderCycles = (graph: Graph): FolderEdge[][] => folderCycles(productionFolderEdges(graph));

/** Plants `import 'node:fs';` at the top of one file, in memory only, as a careless edit would. */
function planting(file: string): Plugin {
  return {
    name: 'plant-node-fs',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        if (args.path !== `${ROOT}${file}`) return undefined;
        return { contents: `import 'node:fs';\n${readFileSync(args.path, 'utf8')}`, loader: 'ts' };
      });
    },
  };
}

const SOURCES = productionSources(ROOT);
// One build of every production file at once, shared by the tests below.
const GRAPH = importGraph(ROOT, SOURCES);

describe('the layout: pure modules hold no I/O, folders import each other without cycles', () => {
  it('given the production tree, then no decider, state, event definition or fold reaches node:*, a package other than zod, the store, the runtime or an adapter', async () => {
    const graph = await GRAPH;
    expect(SOURCES.filter(isPure).length).toBeGreaterThan(40);

    expect(purityViolations(graph, SOURCES), 'pure modules that load I/O (entry -> ... -> what it must not load)').toEqual([]);
  });

  it('given a decider with a planted `import "node:fs"`, then the rule reports exactly that chain', async () => {
    const planted = 'actors/lane/decideQueue.ts';
    const before = purityViolations(await GRAPH, SOURCES);
    const graph = await importGraph(ROOT, SOURCES, [planting(planted)]);

    // The queue decider, the queue projection and the registry reach it too, through the planted file:
    // reported once, from the pure module closest to the offence. (Compared with the tree as it is, so
    // that an offence already there fails the test above, not this one.)
    const added = purityViolations(graph, SOURCES).filter((violation) => !before.includes(violation));
    expect(added).toEqual([`${planted} -> node:fs`]);
  });

  it('given the production folders, then the folder graph (a folder imports another when one of its files does) has no cycle', async () => {
    const cycles = productionFolderCycles(await GRAPH);

    expect(cycles.map(showCycle), 'folder cycles (the folder path, then one file import per step)').toEqual([]);
  });

  it('given the exceptions, then each still names a file, a folder or a folder import that exists', async () => {
    const edges = folderEdges(await GRAPH, isProduction);

    const staleFiles = [...NOT_PURE.keys()].filter((path) => !existsSync(`${ROOT}${path}`));
    const staleEdges = KNOWN_FOLDER_EDGES.filter((known) => !edges.some((edge) => edge.from === known.from && edge.to === known.to));

    expect(staleFiles, 'NOT_PURE entries naming nothing: remove them').toEqual([]);
    expect(staleEdges, 'KNOWN_FOLDER_EDGES no longer imported: remove them').toEqual([]);
  });
});
