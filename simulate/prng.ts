/**
 * A small seeded generator (mulberry32) with the few draws the plan needs. Each purpose draws from its
 * own stream (`streamOf(seed, 'payments')`), so adding deposits to a run leaves its Payments' plan as it was.
 */
export interface Rng {
  /** [0, 1) */
  next(): number;
  /** An integer in [min, max], both included. */
  int(min: number, max: number): number;
  /** A bigint in [min, max], both included (amounts in atomic units stay exact). */
  bigint(min: bigint, max: bigint): bigint;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  shuffle<T>(items: readonly T[]): T[];
}

function mulberry32(state: number): () => number {
  let a = state >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a over the seed and the stream's name: independent 32-bit states per purpose. */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function streamOf(seed: number, name: string): Rng {
  const next = mulberry32(hash32(`${seed}:${name}`));
  const rng: Rng = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    bigint(min, max) {
      const span = max - min + 1n;
      // Two draws give 52 bits: plenty for amounts of a few thousand USDC in atomic units.
      const wide = BigInt(Math.floor(next() * 2 ** 26)) * 2n ** 26n + BigInt(Math.floor(next() * 2 ** 26));
      return min + (wide % span);
    },
    chance: (p) => next() < p,
    pick: (items) => items[Math.floor(next() * items.length)]!,
    shuffle(items) {
      const out = [...items];
      for (let i = out.length - 1; i > 0; i -= 1) {
        const j = Math.floor(next() * (i + 1));
        [out[i], out[j]] = [out[j]!, out[i]!];
      }
      return out;
    },
  };
  return rng;
}
