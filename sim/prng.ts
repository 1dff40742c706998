/**
 * The simulator's only source of randomness: a seeded xoshiro128** stream. Everything a world draws
 * (its workload, its faults, network delays, timer jitter, ids) comes from one of these, so a seed
 * names one history, on every machine.
 */
export class Prng {
  private s: Uint32Array;

  constructor(seed: number) {
    // splitmix32 spreads a small seed over the four words of the state.
    let x = seed >>> 0;
    const next = () => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s = new Uint32Array([next(), next(), next(), next()]);
  }

  /** A uniform 32-bit word. */
  word(): number {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1]!, 5), 7), 9) >>> 0;
    const t = s[1]! << 9;
    s[2]! ^= s[0]!;
    s[3]! ^= s[1]!;
    s[1]! ^= s[2]!;
    s[0]! ^= s[3]!;
    s[2]! ^= t;
    s[3] = rotl(s[3]!, 11);
    return result;
  }

  /** In [0, 1). */
  next(): number {
    return this.word() / 2 ** 32;
  }

  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** A child stream: draws from it never shift this one's (beyond the one word taken here). */
  fork(): Prng {
    return new Prng(this.word());
  }

  /** A UUID-shaped id (v4 layout), for incarnations and run ids. */
  uuid(): string {
    const hex = Array.from({ length: 4 }, () => this.word().toString(16).padStart(8, '0')).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${'89ab'[this.word() % 4]}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
