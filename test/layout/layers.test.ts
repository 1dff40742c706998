import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { type Edge, folderCycles, folderEdges, type Graph, importGraph, productionFolders, productionSources, showCycle } from './importGraph.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The import rule, stated by folder (docs/architecture.md#layers): each top-level folder of the product
 * belongs to one layer, and a file may load only files of its own layer or of a layer below it. The graph
 * is the one that runs (a type-only import is erased: a decider may name the store's types, not load it).
 */
const LAYERS = [
  { layer: 'domain', folders: ['events', 'actors', 'projections'] },
  { layer: 'runtime', folders: ['runtime', 'replay'] },
  { layer: 'adapters', folders: ['adapters'] },
  { layer: 'applications', folders: ['apps', 'web', 'cli'] },
] as const;

/** The domain decides from its inputs alone: no builtin (`node:*`), no package but the schema library. */
const DOMAIN_PACKAGES = /^zod(\/|$)/;

/** The layer's rank (0 the domain), from the file's top-level folder; -1 for a folder in no layer. */
const rankOf = (file: string): number => LAYERS.findIndex(({ folders }) => (folders as readonly string[]).includes(file.split('/')[0] as string));

/** Each import that breaks the rule, as `importer -> imported (layer -> layer)`. */
function violations(graph: Graph): string[] {
  const found: string[] = [];
  for (const [file, edges] of graph) {
    const rank = rankOf(file);
    if (rank < 0) continue; // not a product file (package.json, read for the version)
    for (const edge of edges) {
      if (breaks(rank, edge))
        found.push(`${file} -> ${edge.to} (${LAYERS[rank]?.layer} -> ${edge.external ? 'package' : LAYERS[rankOf(edge.to)]?.layer})`);
    }
  }
  return found.sort();
}

function breaks(rank: number, edge: Edge): boolean {
  if (edge.external) return rank === 0 && !DOMAIN_PACKAGES.test(edge.to);
  return rankOf(edge.to) > rank;
}

/** Plants an import at the top of one file, in memory only, as a careless edit would. */
function planting(file: string, line: string): Plugin {
  return {
    name: 'plant-import',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        if (args.path !== `${ROOT}${file}`) return undefined;
        return { contents: `${line}\n${readFileSync(args.path, 'utf8')}`, loader: 'ts' };
      });
    },
  };
}

describe('the layers: a folder imports its own layer or those below, and no folder imports back', () => {
  const sources = (): string[] => productionSources(ROOT);
  let graph: Promise<Graph> | undefined;
  const built = (): Promise<Graph> => {
    graph ??= importGraph(ROOT, sources());
    return graph;
  };

  it('given the folders the product is built from, then each belongs to exactly one layer', () => {
    const layered = LAYERS.flatMap(({ folders }) => folders).sort();

    expect(productionFolders(ROOT).sort(), 'tsconfig.build.json include against the layers of this test').toEqual(layered);
  });

  it('given the production tree, then no file loads a file of a layer above its own, and the domain loads no builtin nor package but zod', async () => {
    expect(violations(await built()), 'importer -> imported (layer -> layer)').toEqual([]);
  });

  it('given the production tree, then the folder graph (each subfolder a folder of its own) has no cycle', async () => {
    const cycles = folderCycles(folderEdges(await built(), (file) => rankOf(file) >= 0));

    expect(cycles.map(showCycle), 'folder cycles (the folder path, then one file import per step)').toEqual([]);
  });

  it('given a decider with a planted `import "node:fs"`, or a planted import of the outbox, then the rule reports exactly that import', async () => {
    const planted = 'actors/lane/decideQueue.ts';
    // The graph of what the planted file loads, not of the whole tree again: a third of the CPU each.
    const before = violations(await importGraph(ROOT, [planted]));
    expect(before).toEqual([]);
    for (const [line, expected] of [
      ["import 'node:fs';", `${planted} -> node:fs (domain -> package)`],
      ["import '../../runtime/actors/outbox.ts';", `${planted} -> runtime/actors/outbox.ts (domain -> runtime)`],
    ] as const) {
      const graph = await importGraph(ROOT, [planted], [planting(planted, line)]);

      expect(violations(graph).filter((violation) => !before.includes(violation))).toEqual([expected]);
    }
  });
});
