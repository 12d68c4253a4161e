import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call } from '../support/api-client';
import { setNativeBalance, tokenBalance } from '../support/chain';
import { endsWithBooksChecked } from '../support/books';
import { assertMinedExactlyWhenLive, replacedUnderRisingBaseFee } from '../support/rising-base-fee';
import { assertLedgerBalanced, newMerchant, type Merchant } from '../support/fixtures';
import { fundedVault, paidPayment, post, USDC, waitForReturn } from './support';

/**
 * Money sent back (an incident recovery from the escrow, a refund from the recipient's vault), signed
 * under a low base fee and stuck once it jumps: the return's confirmation check replaces its leg at
 * the nonce; only the replacement is mined, and the payer is paid once.
 */
describe('Returns under a rising base fee', () => {
  endsWithBooksChecked();
  let m: Merchant;
  before(async () => {
    m = await newMerchant();
  });

  test('an incident recovery stuck under a rising base fee is replaced at its nonce; the payer gets exactly the excess once', async () => {
    const { payment, payer, escrow } = await paidPayment(m, 10, 3);
    // Gas in the escrow already: no top-up to mine first.
    await setNativeBalance(escrow, 10n ** 17n);
    const incidents = await call(`/v2/payments/${payment.id}/incidents`, { credential: m.cred });
    assert.equal(incidents.status, 200, incidents.text);
    const before = await tokenBalance(payer.address);
    let recoveryId = '';
    const source = await replacedUnderRisingBaseFee(1, async () => {
      const res = await post(m, `/v2/payments/${payment.id}/incident-recoveries`, { incidentId: incidents.body.items[0].id });
      assert.equal(res.status, 201, res.text);
      recoveryId = res.body.incidentRecovery.id;
      return { type: 'incident_recovery', id: recoveryId };
    });
    await waitForReturn(m, payment.id, 'incident-recoveries', recoveryId, 'confirmed');
    assert.equal((await assertMinedExactlyWhenLive(source)).length, 1);
    assert.equal(await tokenBalance(payer.address), before + USDC(3), 'the excess returned once');
    assert.equal(await tokenBalance(escrow), 0n);
    await assertLedgerBalanced();
  });

  test('a refund stuck under a rising base fee is replaced at its nonce; the payer is refunded once from the vault', async () => {
    const vault = await fundedVault(m, 12);
    await setNativeBalance(vault.address, 10n ** 17n);
    const { payment, payer } = await paidPayment(m, 5);
    const before = await tokenBalance(payer.address);
    let refundId = '';
    const source = await replacedUnderRisingBaseFee(1, async () => {
      const res = await post(m, `/v2/payments/${payment.id}/refunds`, { amount: '2' });
      assert.equal(res.status, 201, res.text);
      refundId = res.body.refund.id;
      return { type: 'refund', id: refundId };
    });
    await waitForReturn(m, payment.id, 'refunds', refundId, 'confirmed');
    assert.equal((await assertMinedExactlyWhenLive(source)).length, 1);
    assert.equal(await tokenBalance(payer.address), before + USDC(2), 'refunded once');
    assert.equal(await tokenBalance(vault.address), USDC(10));
    await assertLedgerBalanced();
  });
});
