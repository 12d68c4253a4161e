import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { getAddress } from 'viem';
import { reconcileLedgerAddresses, type ReconcileDeps } from '../../src/domain/ledger/reconcile';
import { assertBooksMatchChain, booksBaseline, newDifferences, type BooksBaseline } from '../support/books';
import { mine, newPayer, payTo, setTreasuryGas, settlementLegsMined, withMiningPaused } from '../support/chain';
import { getHarness } from '../support/harness';
import { USDC } from '../deposits/helpers';
import { createPayment, newMerchant, waitForPayment } from '../support/fixtures';

describe('Ledger reconcile: a leg recorded after the snapshot', () => {
  let baseline: BooksBaseline;
  before(async () => {
    baseline = await booksBaseline();
  });

  test('a leg recorded after the database snapshot and mined before the head is read is money in flight, not missing money', async () => {
    const h = await getHarness();
    const at = (purpose: 'fee', index: number) => getAddress(h.chain.custody.deriveAddress({ purpose, index }));
    const m = await newMerchant();
    const p = (await createPayment(m, { amount: '5' })).body.payment;
    const escrow: string = p.funding.depositAddress.address;
    const liveLegs = () =>
      h.db.prisma.settlementLeg.findMany({ where: { sourceType: 'payment', sourceId: p.id, status: { in: ['broadcast', 'confirmed'] } } });
    await setTreasuryGas(0n);
    let sentBetween = false;
    try {
      await payTo(await newPayer(5n * USDC), escrow, 5n * USDC);
      await waitForPayment(m, p.id, 'accepted, settlement failing for want of gas', (x) => x.operationalState === 'retrying');
      await withMiningPaused(async () => {
        // Reconcile reads the database, then the head: the legs are recorded and mined in between.
        const between = async () => {
          await setTreasuryGas(100n * 10n ** 18n);
          await settlementLegsMined(liveLegs, 3);
          sentBetween = true;
        };
        let first = true;
        const chains: ReconcileDeps['chains'] = {
          networks: () => h.chain.chains.networks(),
          get: (chainId) => {
            const real = h.chain.chains.get(chainId);
            return {
              ...real,
              async getBlockNumber() {
                if (first && chainId === h.chainId) {
                  first = false;
                  await between();
                }
                return real.getBlockNumber();
              },
            };
          },
        };
        const result = await reconcileLedgerAddresses({ prisma: h.db.prisma, chains, custody: h.chain.custody }, [
          escrow,
          at('fee', 0),
          at('fee', 1),
        ]);
        assert.equal(sentBetween, true);
        const posted = await h.db.prisma.ledgerPosting.count({ where: { sourceType: 'payment', sourceId: p.id, leg: 'settlement' } });
        assert.equal(posted, 0, 'the settlement was posted before the look ended');
        assert.deepEqual(newDifferences(result, baseline), []);
      });
    } finally {
      await setTreasuryGas(100n * 10n ** 18n);
    }
    await mine(1);
    await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
    await assertBooksMatchChain({ baseline });
  });
});
