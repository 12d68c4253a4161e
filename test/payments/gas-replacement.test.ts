import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Address } from 'viem';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { mine, newPayer, pokeScanner, setNativeBalance, tokenBalance } from '../support/chain';
import { getHarness } from '../support/harness';
import { endsWithBooksChecked } from '../support/books';
import { assertMinedExactlyWhenLive, replacedUnderRisingBaseFee } from '../support/rising-base-fee';
import { assertLedgerBalanced, createPayment, eventNames, newMerchant, waitForPayment } from '../support/fixtures';

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
    await setNativeBalance(escrow, 10n ** 18n);
    const payer = await newPayer(10_000_000n);

    const source = await replacedUnderRisingBaseFee(3, async () => {
      await chain.sendTokenTransfer({ from: payer, token: SANDBOX_TOKEN_ADDRESS, to: escrow, amountAtomic: 10_000_000n });
      // The transfer's block and the one that takes it to depth (2), at the base fee of the day.
      await mine(2);
      await pokeScanner();
      return { type: 'payment', id: p.id };
    });

    const done = await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
    assert.equal(done.stage, 'settlement_confirmed');
    const confirmed = await assertMinedExactlyWhenLive(source);
    assert.deepEqual(confirmed.map((l) => l.leg).sort(), ['net', 'partner_fee', 'platform_fee']);
    const net = confirmed.find((l) => l.leg === 'net')!;
    const row = await h.db.prisma.payment.findUniqueOrThrow({ where: { id: p.id } });
    assert.equal(row.settlementTxHash?.toLowerCase(), net.txHash, 'the Payment names the transaction that was mined');
    assert.equal(await tokenBalance(m.wallet), 9_850_000n, 'the payee is paid once');
    assert.equal(await tokenBalance(escrow), 0n);
    assert.deepEqual(await eventNames(p.id), ['payment.created', 'payment.processing', 'payment.accepted', 'payment.succeeded']);
    await assertLedgerBalanced();
  });
});
