import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTransaction, type Address, type Hash, type Hex } from 'viem';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { eventually, mine, newPayer, pokeScanner, rpc, setNativeBalance, tokenBalance } from '../support/chain';
import { getHarness } from '../support/harness';
import { endsWithBooksChecked } from '../support/books';
import { assertLedgerBalanced, createPayment, eventNames, newMerchant, waitForPayment } from './fixtures';

const GWEI = 1_000_000_000n;

/**
 * A Payment's settlement signed under a low base fee, stuck once the base fee jumps mid-settlement
 * (anvil_setNextBlockBaseFeePerGas, mining by hand): the workflow replaces each leg at its nonce and
 * succeeds with the transaction the chain mined; the payee is paid once and the books match.
 */
describe('Payment settlement under a rising base fee', () => {
  endsWithBooksChecked();

  test('a settlement stuck under a rising base fee is replaced at the same nonce; only the replacement is mined, the Payment records it, the payee is paid once', async () => {
    const h = await getHarness();
    const chain = h.chain.chains.get(h.chainId);
    const m = await newMerchant();
    const p = (await createPayment(m, { amount: '10' })).body.payment;
    const escrow = p.funding.depositAddress.address as Address;
    // Gas in the escrow already: the legs follow depth at once (no top-up to mine first).
    await setNativeBalance(escrow, 10n ** 17n);
    const payer = await newPayer(10_000_000n);
    const legsOf = () => h.db.prisma.settlementLeg.findMany({ where: { sourceType: 'payment', sourceId: p.id }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });

    await rpc('evm_setAutomine', [false]);
    try {
      await chain.sendTokenTransfer({ from: payer, token: SANDBOX_TOKEN_ADDRESS, to: escrow, amountAtomic: 10_000_000n });
      // The transfer's block and the one that takes it to depth (2), at the base fee of the day.
      await mine(2);
      await pokeScanner();
      const originals = await eventually(
        async (saw) => {
          const legs = await legsOf();
          saw(legs.map((l) => l.status));
          if (legs.length < 3) return undefined;
          // Recorded before broadcast: wait until the node holds all three.
          const pooled = await Promise.all(legs.map((l) => rpc('eth_getTransactionByHash', [l.txHash])));
          return pooled.every((t) => t !== null) ? legs : undefined;
        },
        'the three legs broadcast',
        { mine: false },
      );
      // Then the base fee jumps: the next block's is far above what the legs offer (nothing is mined meanwhile).
      await rpc('anvil_setNextBlockBaseFeePerGas', [`0x${(200n * GWEI).toString(16)}`]);
      await mine(1);
      for (const l of originals) assert.equal(await chain.getTransactionInclusion(l.txHash as Hash), null, `${l.leg} stuck`);

      const replaced = await eventually(
        async (saw) => {
          const legs = await legsOf();
          saw(legs.map((l) => [l.leg, l.nonce, l.status]));
          return legs.length === 6 ? legs : undefined;
        },
        'each leg replaced at its nonce',
        { mine: false },
      );
      for (const original of originals) {
        const family = replaced.filter((l) => l.nonce === original.nonce);
        assert.deepEqual(family.map((l) => [l.leg, l.status]).sort(), [[original.leg, 'broadcast'], [original.leg, 'superseded']]);
        const [was, now] = [original, family.find((l) => l.status === 'broadcast')!].map((l) => parseTransaction(l.serialized as Hex));
        assert.equal(now!.nonce, was!.nonce);
        assert.ok(now!.maxFeePerGas! * 10n >= was!.maxFeePerGas! * 11n && now!.maxPriorityFeePerGas! * 10n >= was!.maxPriorityFeePerGas! * 11n, '+10% on both fees');
      }
    } finally {
      await rpc('evm_setAutomine', [true]);
    }

    const done = await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
    assert.equal(done.stage, 'settlement_confirmed');
    const legs = await legsOf();
    for (const l of legs) {
      const mined = await chain.getTransactionInclusion(l.txHash as Hash);
      assert.equal(mined !== null, l.status === 'confirmed', `${l.leg} ${l.txHash} (${l.status}): mined exactly when it is the leg`);
    }
    assert.deepEqual(legs.filter((l) => l.status === 'confirmed').map((l) => l.leg).sort(), ['net', 'partner_fee', 'platform_fee']);
    const net = legs.find((l) => l.leg === 'net' && l.status === 'confirmed')!;
    const row = await h.db.prisma.payment.findUniqueOrThrow({ where: { id: p.id } });
    assert.equal(row.settlementTxHash?.toLowerCase(), net.txHash, 'the Payment names the transaction that was mined');
    assert.equal(await tokenBalance(m.wallet), 9_850_000n, 'the payee is paid once');
    assert.equal(await tokenBalance(escrow), 0n);
    assert.deepEqual(await eventNames(p.id), ['payment.created', 'payment.processing', 'payment.accepted', 'payment.succeeded']);
    await assertLedgerBalanced();
  });
});
