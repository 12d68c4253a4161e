import { randomInt } from 'node:crypto';
import path from 'node:path';
import { streamOf } from '../../simulate/prng';

export interface Shard {
  files: string[];
  /** The seconds its files took on the last measured run (unknown files count as the median). */
  expectedSeconds: number;
}

/** Shards for a run: TEST_SHARDS, else DEFAULT_SHARDS; one when recording histories (one engine holds them all). */
export const DEFAULT_SHARDS = 3;

export function shardCount(env: NodeJS.ProcessEnv, fileCount: number): number {
  if (env.RECORD_WORKFLOW_HISTORIES) return 1;
  const asked = env.TEST_SHARDS === undefined ? DEFAULT_SHARDS : Number(env.TEST_SHARDS);
  if (!Number.isInteger(asked) || asked < 1) throw new Error(`TEST_SHARDS must be a positive whole number, got ${env.TEST_SHARDS}`);
  return Math.max(1, Math.min(asked, fileCount));
}

function median(values: number[]): number {
  if (values.length === 0) return 1;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * The files `together` picks run in a shard of their own, before the `count` others (they need a
 * worker of their own kind; with one shard, everything shares it). The rest go longest first, each to
 * the shard with the least so far: no shard's total exceeds the mean by more than the longest file.
 * Each shard lists its files in path order; `shuffleShards` then orders them for a run.
 */
export function assignShards(
  files: string[],
  count: number,
  secondsByFile: Record<string, number>,
  root: string,
  together: (file: string) => boolean = () => false,
): Shard[] {
  const fallback = median(Object.values(secondsByFile));
  const weight = (file: string) => secondsByFile[path.relative(root, file)] ?? fallback;
  const kept = count > 1 ? files.filter(together) : [];
  const rest = files.filter((f) => !kept.includes(f));
  const shards: Shard[] = Array.from({ length: count }, () => ({ files: [], expectedSeconds: 0 }));
  const byWeight = rest.sort((a, b) => weight(b) - weight(a) || a.localeCompare(b));
  for (const file of byWeight) {
    const lightest = shards.reduce((min, s) => (s.expectedSeconds < min.expectedSeconds ? s : min));
    lightest.files.push(file);
    lightest.expectedSeconds += weight(file);
  }
  const own: Shard = { files: kept, expectedSeconds: kept.reduce((sum, f) => sum + weight(f), 0) };
  return [own, ...shards].map((s) => ({ ...s, files: [...s.files].sort() })).filter((s) => s.files.length > 0);
}

/** The largest seed: seeds are whole numbers in [0, 2^31), short enough to copy from a log. */
export const MAX_ORDER_SEED = 2 ** 31 - 1;

/** The run's order seed: TEST_ORDER_SEED to replay an order, else a fresh one. */
export function orderSeed(env: NodeJS.ProcessEnv, fresh: () => number = () => randomInt(0, MAX_ORDER_SEED + 1)): number {
  if (env.TEST_ORDER_SEED === undefined || env.TEST_ORDER_SEED === '') return fresh();
  const seed = Number(env.TEST_ORDER_SEED);
  if (!/^\d+$/.test(env.TEST_ORDER_SEED) || seed > MAX_ORDER_SEED)
    throw new Error(`TEST_ORDER_SEED must be a whole number from 0 to ${MAX_ORDER_SEED}, got ${env.TEST_ORDER_SEED}`);
  return seed;
}

/** The line that names the run's order, printed as it starts and again with the totals. */
export const orderSeedLine = (seed: number) => `test order seed: ${seed} (TEST_ORDER_SEED=${seed} replays it)`;

/**
 * Files in an order drawn from the seed and the shard's index (two shards of like files don't share an
 * order): a permutation of them, the same for the same seed, index and files, in whatever order the
 * files come (they are sorted first).
 */
export function shuffleFiles(files: readonly string[], seed: number, shard = 0): string[] {
  return streamOf(seed, `test-order:${shard}`).shuffle([...files].sort());
}

/**
 * Each shard's files in the order the seed draws, those `last` picks after all the others; which file
 * runs in which shard is unchanged.
 */
export function shuffleShards(shards: readonly Shard[], seed: number, last: (file: string) => boolean = () => false): Shard[] {
  return shards.map((s, i) => ({
    ...s,
    files: [
      ...shuffleFiles(
        s.files.filter((f) => !last(f)),
        seed,
        i,
      ),
      ...shuffleFiles(s.files.filter(last), seed, i),
    ],
  }));
}
