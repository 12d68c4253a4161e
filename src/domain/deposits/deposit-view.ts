import type { TFinality } from '../chain/finality.schemas';
import type { Deposit, DepositAddress } from '../../generated/prisma/client';
import type { DepositState, DepositStatus, SettlementStatus } from './pure/deposit-machine';
import type { TDeposit, TDepositAddress } from './deposit.schemas';

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const big = (d: { toString(): string }) => BigInt(d.toString());

export function toDepositAddressView(a: DepositAddress): TDepositAddress {
  return {
    id: a.id,
    accountId: a.accountId,
    address: a.address ?? '',
    chainId: a.chainId,
    networkCode: a.networkCode,
    assetSymbol: a.assetSymbol,
    tokenAddress: a.tokenAddress,
    decimals: a.decimals,
    status: 'active',
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
  };
}

/** Exactly the spec's Deposit fields (see docs/decisions/deposits.md for the values). */
export function toDepositView(d: Deposit, finality: TFinality): TDeposit {
  const asset = { chainId: d.chainId, tokenAddress: d.tokenAddress, symbol: d.assetSymbol, decimals: d.decimals, kind: 'token' as const };
  return {
    id: d.id,
    accountId: d.accountId,
    depositAddressId: d.depositAddressId,
    status: d.status as TDeposit['status'],
    amount: { asset, amount: d.amountAtomic.toString() },
    sourceTransfer: { amount: d.amountAtomic.toString(), txHash: d.txHash, logIndex: d.logIndex, fromAddress: d.fromAddress },
    fees: {
      partnerAmountAtomic: d.partnerFeeAtomic.toString(),
      platformAmountAtomic: d.platformFeeAtomic.toString(),
      networkAmountAtomic: d.networkFeeAtomic.toString(),
      setupAmountAtomic: d.setupFeeAtomic.toString(),
      denomination: asset,
      basis: 'source_amount',
      actualReceivedAmountAtomic: d.actualReceivedAtomic === null ? null : d.actualReceivedAtomic.toString(),
    },
    settlement: {
      status: d.settlementStatus as TDeposit['settlement']['status'],
      txHash: d.settlementTxHash,
      settledAt: iso(d.settledAt),
      reasonCode: d.settlementReasonCode,
    },
    settlementProfileSnapshot: d.settlementProfileSnapshot as Record<string, unknown>,
    txHash: d.txHash,
    finality,
  };
}

/** The machine's state of a stored deposit. */
export function depositStateOf(d: Deposit): DepositState {
  return {
    status: d.status as DepositStatus,
    statusVersion: d.statusVersion,
    amountAtomic: big(d.amountAtomic),
    fees: {
      platformAtomic: big(d.platformFeeAtomic),
      partnerAtomic: big(d.partnerFeeAtomic),
      networkAtomic: big(d.networkFeeAtomic),
      setupAtomic: big(d.setupFeeAtomic),
      netAtomic: big(d.netAtomic),
    },
    settlement: {
      status: d.settlementStatus as SettlementStatus,
      txHash: d.settlementTxHash,
      settledAt: iso(d.settledAt),
      reasonCode: d.settlementReasonCode,
    },
    settlementAttempts: d.settlementAttempts,
    actualReceivedAtomic: d.actualReceivedAtomic === null ? null : big(d.actualReceivedAtomic),
    failureReason: d.failureReason,
    reversedAt: iso(d.reversedAt),
  };
}
