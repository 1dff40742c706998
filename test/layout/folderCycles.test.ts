import { describe, expect, it } from 'vitest';
import { type FolderEdge, folderCycles, showCycle } from './importGraph.ts';

describe('folderCycles: each folder import that closes a loop is shown in a cycle, with the file import behind each step', () => {
  const edge = (from: string, to: string): FolderEdge => ({ from, to, because: { from: `${from}/f.ts`, to: `${to}/g.ts` } });

  it('given a -> b -> c -> a and b -> d, then the one cycle starts at its smallest folder and names each file import', () => {
    const cycles = folderCycles([edge('b', 'c'), edge('c', 'a'), edge('a', 'b'), edge('b', 'd')]);

    expect(cycles.map(showCycle)).toEqual([
      ['a -> b -> c -> a', '    a -> b: a/f.ts imports b/g.ts', '    b -> c: b/f.ts imports c/g.ts', '    c -> a: c/f.ts imports a/g.ts'].join('\n'),
    ]);
  });

  it('given two loops sharing a folder, then both are shown', () => {
    const cycles = folderCycles([edge('a', 'b'), edge('b', 'a'), edge('a', 'c'), edge('c', 'a')]);

    expect(cycles.map((cycle) => cycle.map((step) => step.from).join(' '))).toEqual(['a b', 'a c']);
  });

  it('given an acyclic graph, then there is no cycle', () => {
    expect(folderCycles([edge('a', 'b'), edge('b', 'c'), edge('a', 'c')])).toEqual([]);
  });
});
