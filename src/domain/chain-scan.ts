import type { Address } from 'viem';
import type { ChainRegistry } from '../chain/registry';
import type { Transfer } from '../chain/types';

/** Answers true when it owned (and took) the transfer. */
export type TransferTaker = (transfer: Transfer) => Promise<boolean>;

export interface ScanResult {
  nextFromBlock: string;
  caughtUp: boolean;
  seen: number;
}

/**
 * One scan of a network: the ERC-20 Transfer logs of every configured asset in the next block range
 * (at most batchBlocks), each offered to its owners in turn (Payments, then deposit addresses).
 * Owners count a transfer once, so a rescan is harmless.
 */
export async function scanRange(
  deps: { chains: ChainRegistry; takers: TransferTaker[]; batchBlocks?: number; isOurs?: (address: string) => Promise<boolean> },
  input: { chainId: number; fromBlock: string },
): Promise<ScanResult> {
  const chain = deps.chains.get(input.chainId);
  const network = deps.chains.network(input.chainId);
  const head = await chain.getBlockNumber();
  const from = BigInt(input.fromBlock);
  if (from > head) return { nextFromBlock: input.fromBlock, caughtUp: true, seen: 0 };
  const last = from + BigInt(deps.batchBlocks ?? 500) - 1n;
  const to = head < last ? head : last;
  let seen = 0;
  for (const asset of network.assets) {
    const transfers = await chain.getTransfers({ token: asset.tokenAddress as Address, to: undefined, fromBlock: from, toBlock: to });
    for (const transfer of transfers) {
      // Money moving between the service's own addresses is never a new payment or deposit.
      if (deps.isOurs && (await deps.isOurs(transfer.from))) continue;
      for (const take of deps.takers) {
        if (await take(transfer)) {
          seen += 1;
          break;
        }
      }
    }
  }
  return { nextFromBlock: (to + 1n).toString(), caughtUp: to === head, seen };
}
