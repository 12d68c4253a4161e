import { createChainFaults, jsonRpc, type MiningMode } from '../../src/chain/chain-faults';

/**
 * The harness chains' fee market, mining mode and clock, as the run left them between two files, and
 * the one way tests change them: inside `withChainRestored`, which puts them back whether the body
 * passes or throws. Every file of a suite process ends with `checkChainBaseline` (test/index.ts): a file
 * that left a chain changed fails, named, and the chain is put back for the files after it. The order
 * of files in a shard is shuffled, so a change left behind would otherwise fail some other file, now
 * and then (a high base fee left by one file held a later file's settlement short of gas).
 */

export interface ChainState {
  mining: MiningMode;
  /** The base fee of the next block (the pending block's): what a transaction sent now must offer. */
  nextBaseFeeWei: bigint;
  /** The head's timestamp less the wall clock, in seconds: anvil's clock moved (evm_increaseTime...) when large. */
  clockAheadSeconds: number;
}

/**
 * A chain's clock may run ahead of the wall clock by this much without a test having moved it: anvil
 * stamps blocks from the machine's clock (checked: 320 blocks mined at once, the head still at the
 * wall clock's second), so a clock far ahead was moved.
 */
export const CLOCK_SLACK_SECONDS = 60;

const GWEI = 1_000_000_000n;

export async function readChainState(rpcUrl: string, nowMs = Date.now()): Promise<ChainState> {
  const mining = await createChainFaults(rpcUrl).miningMode();
  const pending = await jsonRpc<{ baseFeePerGas: string }>(rpcUrl, 'eth_getBlockByNumber', ['pending', false]);
  const head = await jsonRpc<{ timestamp: string }>(rpcUrl, 'eth_getBlockByNumber', ['latest', false]);
  return {
    mining,
    nextBaseFeeWei: BigInt(pending.baseFeePerGas),
    clockAheadSeconds: Number(BigInt(head.timestamp)) - Math.floor(nowMs / 1000),
  };
}

const miningText = (m: MiningMode) => (m.mode === 'interval' ? `a block every ${m.seconds} s` : m.mode);
const gweiText = (wei: bigint) => `${Number((wei * 1000n) / GWEI) / 1000} gwei (${wei} wei)`;

/**
 * How `now` differs from `baseline`, one line each; none when it is back. A base fee only falls by
 * itself (EIP-1559: an eighth a block below half full, and test blocks are nearly empty), so one
 * above the baseline was raised and left; a clock ahead of the wall clock was moved forward.
 */
export function chainDrift(baseline: ChainState, now: ChainState): string[] {
  const drift: string[] = [];
  if (miningText(now.mining) !== miningText(baseline.mining))
    drift.push(`mining is ${miningText(now.mining)}, the baseline ${miningText(baseline.mining)}`);
  if (now.nextBaseFeeWei > baseline.nextBaseFeeWei)
    drift.push(`the next block's base fee is ${gweiText(now.nextBaseFeeWei)}, above the baseline ${gweiText(baseline.nextBaseFeeWei)}`);
  const clockMoved = now.clockAheadSeconds > Math.max(baseline.clockAheadSeconds, 0) + CLOCK_SLACK_SECONDS;
  if (clockMoved)
    drift.push(`the chain's clock is ${now.clockAheadSeconds} s ahead of the wall clock, the baseline ${baseline.clockAheadSeconds} s`);
  return drift;
}

/**
 * Puts the mining mode and the base fee back as `baseline` had them: the base fee set for the next
 * block and that block mined (the fee then goes on falling by itself), then the mining mode. A moved
 * clock can't go back (block times only rise): tests that move it run on a node of their own.
 */
export async function restoreChain(rpcUrl: string, baseline: ChainState): Promise<void> {
  const faults = createChainFaults(rpcUrl);
  const now = await readChainState(rpcUrl);
  if (now.nextBaseFeeWei > baseline.nextBaseFeeWei) {
    await setNextBaseFee(rpcUrl, baseline.nextBaseFeeWei);
    await faults.mine(1);
  }
  if (miningText(now.mining) !== miningText(baseline.mining)) await faults.setMiningMode(baseline.mining);
}

/**
 * Runs `body` and then, whether it passed or threw, puts the chain's mining mode and base fee back as
 * they were before it. The one way a test changes them on a shared chain.
 */
export async function withChainRestored<T>(rpcUrl: string, body: () => Promise<T>): Promise<T> {
  const baseline = await readChainState(rpcUrl);
  try {
    return await body();
  } finally {
    await restoreChain(rpcUrl, baseline);
  }
}

/** Sets the next block's base fee (EIP-1559 lowers it an eighth a block after that: set it again to hold it). */
export async function setNextBaseFee(rpcUrl: string, wei: bigint): Promise<void> {
  await jsonRpc(rpcUrl, 'anvil_setNextBlockBaseFeePerGas', [`0x${wei.toString(16)}`]);
}

/** Runs `body` with the next block's base fee at `wei`; the fee and the mining mode it found are back afterwards. */
export function withNextBaseFee<T>(rpcUrl: string, wei: bigint, body: () => Promise<T>): Promise<T> {
  return withChainRestored(rpcUrl, async () => {
    await setNextBaseFee(rpcUrl, wei);
    return body();
  });
}

/** Each shared chain's state as the last file left it: the next file's baseline. */
const baselines = new Map<string, ChainState>();

/** The shared chains' baselines, read when the harness has started them (before any test uses them). */
export async function noteChainBaselines(rpcUrls: string[]): Promise<void> {
  for (const rpcUrl of rpcUrls) baselines.set(rpcUrl, await readChainState(rpcUrl));
}

/**
 * At the end of a file: each shared chain must be back at its baseline. One that is not is put back
 * (so the next file starts clean) and the file fails, named, with what it left changed.
 */
export function checkChainBaseline(file: string): Promise<void> {
  return checkChainsAgainst(file, baselines);
}

/** checkChainBaseline against the given chains' baselines, which it moves on to each chain's state after. */
export async function checkChainsAgainst(file: string, baselines: Map<string, ChainState>): Promise<void> {
  const problems: string[] = [];
  for (const [rpcUrl, baseline] of baselines) {
    const now = await readChainState(rpcUrl);
    const drift = chainDrift(baseline, now);
    if (drift.length > 0) {
      problems.push(`${rpcUrl}: ${drift.join('; ')}`);
      await restoreChain(rpcUrl, baseline);
    }
    baselines.set(rpcUrl, await readChainState(rpcUrl));
  }
  if (problems.length > 0)
    throw new Error(
      `${file} left a shared chain changed (restore it in a finally or after hook: withChainRestored in test/support/chain-baseline.ts):\n  ${problems.join('\n  ')}`,
    );
}
