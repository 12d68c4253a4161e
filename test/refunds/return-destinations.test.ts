import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { zeroAddress } from 'viem';
import { call, newApp, uniqueUserId } from '../support/api-client';
import { newPayer, tokenBalance } from '../support/chain';
import { getHarness } from '../support/harness';
import { endsWithBooksChecked } from '../support/books';
import { awaitWorkflowResult } from '../support/workflow-result';
import { newMerchant, type Merchant } from '../support/fixtures';
import { startAdminApi } from '../webhooks/support/admin';
import { recoverIncident } from '../../src/domain/operators/operator-actions';
import { fundedVault, paidPayment, post, USDC, waitForReturn } from './support';
import { approvedApproval, operatorReturnDeps } from './approvals';

const TOKEN = '0xf1108D9fDF3d265B59Bf6Ce7Bf240f99c071ffF5';

/** A 400 naming body.destinationAddress with this reasonCode. */
function assertRefusedDestination(res: { status: number; text: string; body: any }, reasonCode: string) {
  assert.equal(res.status, 400, res.text);
  assert.equal(res.body.error.code, 'bad_request', res.text);
  assert.equal(res.body.error.details.reasonCode, reasonCode, res.text);
  assert.deepEqual(
    res.body.error.details.fields.map((f: { field: string }) => f.field),
    ['body.destinationAddress'],
  );
}

describe('Where returned money may go', () => {
  endsWithBooksChecked();
  let m: Merchant;
  before(async () => {
    m = await newMerchant();
  });

  test("a partner cannot send a refund or a recovery to an address other than the payer's; naming the payer (any case) is accepted", async () => {
    const h = await getHarness();
    await fundedVault(m, 10);
    const { payment, payer } = await paidPayment(m, 4, 1);
    const stranger = (await newPayer(0n)).address;
    const refund = await post(m, `/v2/payments/${payment.id}/refunds`, { amount: '1', destinationAddress: stranger });
    assertRefusedDestination(refund, 'destination_not_payer');
    const [incident] = (await call(`/v2/payments/${payment.id}/incidents`, { credential: m.cred })).body.items;
    const recovery = await post(m, `/v2/payments/${payment.id}/incident-recoveries`, {
      incidentId: incident.id,
      destinationAddress: stranger,
    });
    assertRefusedDestination(recovery, 'destination_not_payer');
    assert.equal(await h.db.prisma.fundReturn.count({ where: { paymentId: payment.id } }), 0, 'nothing created');

    const toPayer = await post(m, `/v2/payments/${payment.id}/refunds`, { amount: '1', destinationAddress: payer.address.toLowerCase() });
    assert.equal(toPayer.status, 201, toPayer.text);
    assert.equal(toPayer.body.refund.destinationAddress, payer.address.toLowerCase());
    await waitForReturn(m, payment.id, 'refunds', toPayer.body.refund.id, 'confirmed');
    const back = await post(m, `/v2/payments/${payment.id}/incident-recoveries`, { incidentId: incident.id });
    assert.equal(back.status, 201, back.text);
    await waitForReturn(m, payment.id, 'incident-recoveries', back.body.incidentRecovery.id, 'confirmed');
    assert.equal(await tokenBalance(stranger), 0n);
  });

  test('an operator may name another address under an approval by a second operator: the recovery is paid there and audited with who, why and where', async () => {
    const h = await getHarness();
    const { payment } = await paidPayment(m, 2, 1);
    const [incident] = (await call(`/v2/payments/${payment.id}/incidents`, { credential: m.cred })).body.items;
    const target = (await newPayer(0n)).address;
    const approval = await approvedApproval({
      paymentId: payment.id,
      incidentId: incident.id,
      destinationAddress: target,
      requestedBy: 'ops:bob',
      decidedBy: 'ops:alice',
    });
    const created = await recoverIncident(operatorReturnDeps(h), { actor: 'ops:bob', channel: 'admin_api' }, payment.id, {
      incidentId: incident.id,
      destinationAddress: target,
      reason: 'payer lost the key',
      approvalId: approval.id,
    });
    await waitForReturn(m, payment.id, 'incident-recoveries', created.id, 'confirmed');
    assert.equal(await tokenBalance(target), USDC(1));
    assert.equal((await h.db.prisma.fundReturn.findUniqueOrThrow({ where: { id: created.id } })).approvalId, approval.id);
    const audit = await h.db.prisma.operatorAction.findMany({ where: { targetType: 'payment', targetId: payment.id } });
    assert.deepEqual(
      audit.map((a) => [a.actor, a.action, a.reason, a.outcome, (a.details as Record<string, string>).destinationAddress]),
      [['ops:bob', 'recover-incident', 'payer lost the key', 'created', target]],
    );
  });

  test('the zero address and the token contract are refused as a return destination, even by an operator, and as a payout wallet', async () => {
    const h = await getHarness();
    const { payment } = await paidPayment(m, 2, 1);
    const [incident] = (await call(`/v2/payments/${payment.id}/incidents`, { credential: m.cred })).body.items;
    const admin = await startAdminApi({ allowPrivate: false, withEngine: true });
    try {
      const route = `/admin/v1/payments/${payment.id}/incident-recoveries`;
      for (const [address, reasonCode] of [
        [zeroAddress, 'zero_address'],
        [TOKEN, 'token_contract'],
        [TOKEN.toLowerCase(), 'token_contract'],
      ] as const) {
        const res = await admin.call('POST', route, {
          incidentId: incident.id,
          destinationAddress: address,
          reason: 'test',
        });
        assertRefusedDestination({ status: res.status, text: JSON.stringify(res.body), body: res.body }, reasonCode);
      }
      assert.equal(await h.db.prisma.fundReturn.count({ where: { paymentId: payment.id } }), 0);
    } finally {
      await admin.close();
    }
    const cred = await newApp();
    const account = await call('/v2/accounts', { credential: cred, body: { externalUserId: uniqueUserId('dest') } });
    assert.equal(account.status, 201, account.text);
    for (const [address, reasonCode] of [
      [zeroAddress, 'zero_address'],
      [TOKEN, 'token_contract'],
    ] as const) {
      const res = await call(`/v2/accounts/${account.body.account.id}/connected-wallets`, {
        credential: cred,
        body: { chainId: h.chainId, address },
      });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.details.reasonCode, reasonCode, res.text);
      assert.deepEqual(
        res.body.error.details.fields.map((f: { field: string }) => f.field),
        ['body.address'],
      );
    }
  });

  test('a return recorded to the zero address or the token contract is refused by the settlement sender: failed, nothing sent', async () => {
    const h = await getHarness();
    const { payment, escrow } = await paidPayment(m, 2, 2);
    const [incident] = (await call(`/v2/payments/${payment.id}/incidents`, { credential: m.cred })).body.items;
    for (const to of [zeroAddress, TOKEN.toLowerCase()]) {
      // As an older service recorded it, before the rule.
      const row = await h.db.prisma.fundReturn.create({
        data: {
          id: `recovery_dest${Date.now()}${to.slice(2, 6)}`,
          kind: 'incident_recovery',
          appId: m.cred.appId,
          paymentId: payment.id,
          incidentId: incident.id,
          status: 'pending',
          statusVersion: 1,
          chainId: h.chainId,
          tokenAddress: TOKEN.toLowerCase(),
          fromAddress: escrow.toLowerCase(),
          toAddress: to,
          amountAtomic: String(USDC(2)),
          requestedBy: 'operator',
          actor: 'test',
        },
      });
      await h.engine.startFundReturn(row.id, 2);
      assert.deepEqual(await awaitWorkflowResult(h, `fund-return:${row.id}`), { status: 'failed' });
      assert.equal(
        (await h.db.prisma.fundReturn.findUniqueOrThrow({ where: { id: row.id } })).failureReason,
        'settlement_destination_not_allowed',
      );
    }
    assert.equal(await tokenBalance(escrow), USDC(2));
    assert.equal(await tokenBalance(zeroAddress), 0n);
    // Returned to the payer at last, so the books and the chain agree for later files.
    const back = await post(m, `/v2/payments/${payment.id}/incident-recoveries`, { incidentId: incident.id });
    assert.equal(back.status, 201, back.text);
    await waitForReturn(m, payment.id, 'incident-recoveries', back.body.incidentRecovery.id, 'confirmed');
  });
});
