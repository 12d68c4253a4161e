import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createChainFaults } from '../../src/chain/chain-faults';
import type { TTransactionFinality } from '../../src/domain/chain/finality.schemas';
import { call } from '../support/api-client';
import { endsWithBooksChecked } from '../support/books';
import { legMinedAtHead, mine, pokeScanner, receiptOf, withMiningPaused } from '../support/chain';
import { countsUpBlockByBlock, finalityAt, type FinalityRead } from '../support/finality';
import { newMerchant } from '../support/fixtures';
import { getHarness } from '../support/harness';
import { fundedVault, paidPayment, post, USDC, waitForReturn } from './support';

type LegFinality = TTransactionFinality & { leg: string };

describe("A refund's live finality (GET /v2/payments/{paymentId}/refunds)", () => {
  endsWithBooksChecked();

  test('its leg counts up one confirmation per block the scanner reads, is final at the depth, and a reorg that mines it again at the head makes it not final until the blocks come back', async () => {
    const h = await getHarness();
    const required = h.chain.chains.network(h.chainId).confirmations;
    const m = await newMerchant();
    await fundedVault(m, 5);
    const { payment, payer } = await paidPayment(m, 3);

    const refundId = await withMiningPaused(async () => {
      const created = await post(m, `/v2/payments/${payment.id}/refunds`, { amount: '2', reason: 'returned' });
      assert.equal(created.status, 201, created.text);
      const refund = created.body.refund;
      assert.deepEqual(refund.finality, { transfers: [], settlement: [] }, 'nothing on chain yet');
      assert.equal(refund.destinationAddress, payer.address.toLowerCase());

      // The refund's one leg, from the merchant's vault to the payer, mined in the head block and no further.
      const txHash = (await legMinedAtHead({ type: 'refund', id: refund.id })).toLowerCase();
      const mined = Number(BigInt((await receiptOf(txHash as `0x${string}`)).blockNumber));
      const legOf: FinalityRead = async (saw) => {
        const res = await call(`/v2/payments/${payment.id}/refunds`, { credential: m.cred });
        assert.equal(res.status, 200, res.text);
        const item = (res.body.items as Array<{ id: string; finality: { transfers: unknown[]; settlement: LegFinality[] } }>).find(
          (r) => r.id === refund.id,
        );
        saw(item?.finality ?? `${refund.id} not listed`);
        assert.deepEqual(item?.finality.transfers, [], 'a fund return has no incoming transfer');
        const leg = item?.finality.settlement.find((l) => l.transactionHash === txHash);
        if (leg) assert.equal(leg.leg, 'net');
        return leg;
      };

      // Block by block: one confirmation each, final at the network's depth, the estimate gone with it.
      const depth = required + 2;
      await countsUpBlockByBlock(legOf, "the refund's leg", { minedAt: mined, depth });

      // A reorg mines the leg again in the head block (nothing of the vault's comes after it): one
      // confirmation, not final, an estimate again; then the next blocks make it final once more.
      await createChainFaults(h.rpcUrl).remine(txHash as `0x${string}`, { blocksLater: depth - 1 });
      await pokeScanner();
      const back = await finalityAt(legOf, "the refund's leg after the reorg", 1);
      assert.deepEqual(
        [back.blockNumber, back.finalized, back.estimatedFinalAt === null],
        [mined + depth - 1, false, false],
        'read in its new block, not final',
      );
      for (let n = 2; n <= required; n += 1) {
        await mine(1);
        await pokeScanner();
        const again = await finalityAt(legOf, "the refund's leg after the reorg", n);
        assert.equal(again.finalized, n >= required);
      }
      return refund.id as string;
    });

    // The refund itself: confirmed once its leg is at the depth, the payer paid.
    const done = await waitForReturn(m, payment.id, 'refunds', refundId, 'confirmed');
    assert.equal(done.amount.amountAtomic, String(USDC(2)));
  });
});
