import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Address, Hash } from 'viem';
import { createChainFaults } from '../../src/chain/chain-faults';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import type { TTransactionFinality } from '../../src/domain/chain/finality.schemas';
import { call } from '../support/api-client';
import { eventually, mine, newPayer, pokeScanner, receiptOf, withMiningPaused } from '../support/chain';
import { createPayment, newMerchant, type Merchant } from '../support/fixtures';
import { getHarness } from '../support/harness';
import { countsUpBlockByBlock, finalityAt, type FinalityRead } from '../support/finality';

const USDC = 1_000_000n;

async function readPayment(m: Merchant, paymentId: string) {
  const res = await call(`/v2/payments/${paymentId}`, { credential: m.cred });
  assert.equal(res.status, 200);
  return res.body.payment;
}

/** The payer's transfer as GET /v2/payments/{id} answers it. */
function transferOf(m: Merchant, paymentId: string, txHash: string): FinalityRead {
  return async (saw) => {
    const finality = (await readPayment(m, paymentId)).finality as { transfers: TTransactionFinality[] };
    saw(finality);
    return finality.transfers.find((x) => x.transactionHash === txHash.toLowerCase());
  };
}

describe("A Payment's live finality (GET /v2/payments/{id})", () => {
  test('counts up one confirmation per block the scanner reads, is final at the depth, moves back on a reorg, and follows the settlement legs', async () => {
    const h = await getHarness();
    const required = h.chain.chains.network(h.chainId).confirmations;
    const chain = h.chain.chains.get(h.chainId);
    const m = await newMerchant();
    const created = (await createPayment(m, { amount: '3' })).body.payment;
    assert.deepEqual(created.finality, { transfers: [], settlement: [] }, 'nothing on chain yet');
    const payer = await newPayer(3n * USDC);
    const escrow = created.funding.depositAddress.address as Address;

    await withMiningPaused(async () => {
      const funding = await chain.signTokenTransfer({ from: payer, token: SANDBOX_TOKEN_ADDRESS, to: escrow, amountAtomic: 3n * USDC });
      await chain.broadcast(funding);
      await mine(1);
      const mined = Number(BigInt((await receiptOf(funding.txHash)).blockNumber));
      await pokeScanner();

      // Block by block: one confirmation each, final at the network's depth, the estimate gone with it.
      const depth = required + 2;
      const transfer = transferOf(m, created.id, funding.txHash);
      await countsUpBlockByBlock(transfer, "the payer's transfer", { minedAt: mined, depth });

      // A reorg mines the transfer one block later: the scanner reads the new chain and it counts one fewer.
      const faults = createChainFaults(h.rpcUrl);
      await faults.remine(funding.txHash as Hash, { blocksLater: 1 });
      await pokeScanner();
      const moved = await finalityAt(transfer, "the payer's transfer after the reorg", depth - 1);
      assert.equal(moved.blockNumber, mined + 1, 'read in its new block');
      assert.equal(moved.finalized, depth - 1 >= required);

      // The settlement the Payment sent meanwhile: each leg counts up as the blocks come.
      const legs = await eventually(
        async (saw) => {
          const finality = (await readPayment(m, created.id)).finality as { settlement: Array<TTransactionFinality & { leg: string }> };
          saw(finality.settlement);
          return finality.settlement.length === 3 && finality.settlement.every((l) => l.finalized) ? finality.settlement : undefined;
        },
        'every settlement leg final',
        { timeoutMs: 90_000 },
      );
      assert.deepEqual(legs.map((l) => l.leg).sort(), ['net', 'partner_fee', 'platform_fee']);
      for (const l of legs) assert.ok(l.blockNumber !== null && l.confirmations >= required && l.estimatedFinalAt === null);
    });
  });
});
