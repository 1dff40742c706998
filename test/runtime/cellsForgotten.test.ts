/**
 * Memory flat in actors ever spawned (issue 16): a passivated actor's cell is kept so the refs others
 * hold reach its next incarnation, but not for ever: past a threshold, passivated leaves are forgotten,
 * and a ref still held to one finds its path again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type ActorSystem, cellCount, child, query, type ReplyTo, reply, startActorSystem, stopSystem } from '../../runtime/actors/runtime.ts';

type Msg = { readonly replyTo: ReplyTo<number> };
let system: ActorSystem;
afterEach(() => stopSystem(system));

const hydrations = new Map<string, number>();
const spec = (name: string) => ({
  hydrate: () => {
    hydrations.set(name, (hydrations.get(name) ?? 0) + 1);
    return { n: hydrations.get(name)! };
  },
  receive: (state: { n: number }, msg: Msg) => {
    reply(msg.replyTo, state.n);
    return state;
  },
  passivateAfterMs: 5,
});
const ask = (name: string) => query(child(system, name, spec(name)), (replyTo) => ({ replyTo }), 5_000);

describe("the runtime's cells", () => {
  it('given 3,000 actors that passivated, then their cells are forgotten as new ones spawn, and a ref held to one still reaches a fresh incarnation', async () => {
    system = startActorSystem();
    const held = child(system, 'a-0', spec('a-0'));
    for (let i = 0; i < 3_000; i++) expect(await ask(`a-${i}`)).toBe(1);
    const deadline = Date.now() + 10_000;
    let spawned = 0;
    // Each new actor gives the runtime a chance to forget the passivated ones: wait for it, bounded.
    while (cellCount(system) > 1_100) {
      if (Date.now() > deadline) throw new Error(`still ${cellCount(system)} cells`);
      await ask(`b-${spawned++}`);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(cellCount(system)).toBeLessThanOrEqual(1_100);
    // The ref taken before it passivated reaches it again, hydrated anew.
    expect(await query(held, (replyTo) => ({ replyTo }), 5_000)).toBe(2);
    expect(await ask('a-0')).toBe(2);
  });
});
