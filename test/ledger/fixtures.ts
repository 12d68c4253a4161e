import type { AppCredential } from '../../src/domain/apps/apps';
import { newId } from '../../src/domain/values/ids';
import { bookFor, postToLedger, type LedgerAsset, type PostingInput } from '../../src/domain/ledger/ledger';
import { newApp } from '../support/api-client';
import { getHarness } from '../support/harness';
import { newAccount } from '../support/fixtures';

/** The sandbox USDC of config/environments.json. */
export async function usdc(): Promise<LedgerAsset> {
  const h = await getHarness();
  const network = h.environments.environments.sandbox.networks[0]!;
  const asset = network.assets[0]!;
  return { chainId: network.chainId, tokenAddress: asset.tokenAddress, symbol: asset.symbol, decimals: asset.decimals };
}

/** An account created through the API, as a partner would. */
export async function appWithAccount(): Promise<{ cred: AppCredential; accountId: string }> {
  const cred = await newApp();
  return { cred, accountId: await newAccount(cred) };
}

export async function post(input: PostingInput) {
  const h = await getHarness();
  return h.db.prisma.$transaction((tx) => postToLedger(tx, input));
}

/**
 * A receive Payment's two legs for recipient `accountId`: the collection of `amount` into escrow
 * (attributed to the recipient, Transaction pending) and, optionally, its settlement net of a 1% platform
 * and 0.5% partner fee (Transaction posted; fee lines that round to zero are left out).
 */
export async function receivePayment(opts: {
  appId: string;
  accountId: string;
  amount: bigint;
  paymentId?: string;
  settle?: boolean;
}): Promise<{ paymentId: string; collection: string; settlement?: string }> {
  const asset = await usdc();
  const paymentId = opts.paymentId ?? newId('payment');
  const collection = await post({
    appId: opts.appId,
    sourceType: 'payment',
    sourceId: paymentId,
    leg: 'collection',
    asset,
    description: `Collection for ${paymentId}`,
    entries: [
      { book: bookFor('escrow', paymentId), amountAtomic: opts.amount, accountId: opts.accountId },
      { book: bookFor('external', asset.chainId), amountAtomic: -opts.amount },
    ],
    transactions: [
      {
        accountId: opts.accountId,
        direction: 'received',
        senderAccountId: null,
        receiverAccountId: opts.accountId,
        amountAtomic: opts.amount,
        status: 'pending',
        financialLegKind: 'collection',
        paymentId,
      },
    ],
  });
  if (!opts.settle) return { paymentId, collection: collection.postingId };
  const platform = opts.amount / 100n;
  const partner = opts.amount / 200n;
  const net = opts.amount - platform - partner;
  const settlement = await post({
    appId: opts.appId,
    sourceType: 'payment',
    sourceId: paymentId,
    leg: 'settlement',
    asset,
    description: `Settlement for ${paymentId}`,
    entries: [
      { book: bookFor('escrow', paymentId), amountAtomic: -opts.amount, accountId: opts.accountId },
      { book: bookFor('upa_settled', opts.accountId), amountAtomic: net },
      { book: bookFor('platform_fees'), amountAtomic: platform },
      { book: bookFor('partner_fees', opts.appId), amountAtomic: partner },
    ].filter((e) => e.amountAtomic !== 0n),
    transactions: [
      {
        accountId: opts.accountId,
        direction: 'received',
        senderAccountId: null,
        receiverAccountId: opts.accountId,
        amountAtomic: net,
        status: 'posted',
        financialLegKind: 'settlement',
        paymentId,
      },
    ],
  });
  return { paymentId, collection: collection.postingId, settlement: settlement.postingId };
}
