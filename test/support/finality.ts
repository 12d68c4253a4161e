import assert from 'node:assert/strict';
import type { TTransactionFinality } from '../../src/domain/chain/finality.schemas';
import { eventually, mine, pokeScanner } from './chain';
import { getHarness } from './harness';

/**
 * Live finality as the API answers it, read block by block (docs/decisions/custody-and-chains.md,
 * "Live finality"): the helpers the Payment, deposit and fund return tests share.
 */

/** One transaction's finality in an API answer; undefined while the answer does not list it. `saw` notes the answer for a failure. */
export type FinalityRead = (saw: (answer: unknown) => void) => Promise<TTransactionFinality | undefined>;

/** Waits until `read` answers the transaction at `n` confirmations: the scanner poked every second, the chain as it is. */
export function finalityAt(read: FinalityRead, what: string, n: number): Promise<TTransactionFinality> {
  return eventually(
    async (saw) => {
      const t = await read(saw);
      return t?.confirmations === n ? t : undefined;
    },
    `${what} at ${n} confirmation(s)`,
    { mine: false },
  );
}

/**
 * On a held chain (mining paused), with the transaction mined in the head block at `minedAt`: mines one
 * block at a time up to `depth` confirmations, and after each block the read must answer exactly that
 * many, in that block, final exactly from the network's depth on, with an estimate only before it.
 */
export async function countsUpBlockByBlock(read: FinalityRead, what: string, opts: { minedAt: number; depth: number }): Promise<void> {
  const h = await getHarness();
  const required = h.chain.chains.network(h.chainId).confirmations;
  assert.ok(opts.depth > required, `counting to ${opts.depth} passes the network's depth, ${required}`);
  for (let n = 1; n <= opts.depth; n += 1) {
    if (n > 1) {
      await mine(1);
      await pokeScanner();
    }
    const t = await finalityAt(read, what, n);
    assert.deepEqual(
      [t.chainId, t.blockNumber, t.confirmationsRequired, t.finalized, t.estimatedFinalAt === null],
      [h.chainId, opts.minedAt, required, n >= required, n >= required],
      `${what} after ${n} block(s)`,
    );
    if (t.estimatedFinalAt !== null) assert.ok(Date.parse(t.estimatedFinalAt) > 0, `an estimate is a time: ${t.estimatedFinalAt}`);
  }
}
