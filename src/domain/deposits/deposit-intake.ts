import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import type { Transfer } from '../../chain/types';
import { toAtomic } from '../amounts/amounts';
import type { DepositEngine, DepositStart } from '../engine/pure/engine';
import { depositIdFor } from './deposit-keys';

/**
 * Takes a scanned transfer whose recipient is a deposit address: starts that transfer's
 * DepositWorkflow (on any network: one on another chain than the address's is `ignored`,
 * asset_not_accepted). The workflow is named after the transfer and the engine refuses a second one, so a
 * rescan, a restarted scanner or a replayed activity makes one deposit, with no check-then-insert.
 * Answers false when the recipient is not a deposit address.
 */
export async function takeDepositTransfer(
  deps: { prisma: PrismaClient; chains: ChainRegistry; engine: Pick<DepositEngine, 'startDeposit'> },
  transfer: Transfer,
): Promise<boolean> {
  const address = await deps.prisma.depositAddress.findUnique({ where: { address: transfer.to.toLowerCase() } });
  if (!address) return false;
  const network = deps.chains.network(transfer.chainId);
  const asset = network.assets.find((a) => a.tokenAddress.toLowerCase() === transfer.token.toLowerCase());
  if (!asset) return false; // the scanner only reads configured assets; nothing to own otherwise
  // Recorded already (maybe under an older workflow name): its own workflow follows it.
  const known = await deps.prisma.deposit.count({
    where: { depositAddressId: address.id, txHash: transfer.txHash.toLowerCase(), ordinal: transfer.ordinal },
  });
  if (known > 0) return true;
  const start: DepositStart = {
    depositId: depositIdFor(transfer),
    depositAddressId: address.id,
    chainId: transfer.chainId,
    txHash: transfer.txHash.toLowerCase(),
    logIndex: transfer.logIndex,
    ordinal: transfer.ordinal,
    blockNumber: transfer.blockNumber.toString(),
    tokenAddress: asset.tokenAddress,
    fromAddress: transfer.from.toLowerCase(),
    toAddress: transfer.to.toLowerCase(),
    amountAtomic: transfer.amountAtomic.toString(),
    asset: { symbol: asset.symbol, decimals: asset.decimals },
    // The same address exists on every network: a transfer on another chain than the address's is
    // recorded and listed, never settled, like another asset (the funds stay at the address).
    assetAccepted: address.chainId === transfer.chainId && address.tokenAddress.toLowerCase() === asset.tokenAddress.toLowerCase(),
    minimumDeposit: {
      amountAtomic: toAtomic(asset.minimumDeposit.amount, asset.decimals).toString(),
      inclusive: asset.minimumDeposit.inclusive,
    },
    fees: { platformFeeBps: address.platformFeeBps, partnerFeeBps: address.partnerFeeBps },
    confirmations: network.confirmations,
  };
  await deps.engine.startDeposit(start);
  return true;
}
