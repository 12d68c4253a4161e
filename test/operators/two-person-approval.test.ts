import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call } from '../support/api-client';
import { newPayer, tokenBalance } from '../support/chain';
import { getHarness } from '../support/harness';
import { endsWithBooksChecked } from '../support/books';
import { newMerchant, type Merchant } from '../support/fixtures';
import { createTestOperator, type TestOperator } from '../support/operators';
import { startAdminApi, type AdminApi } from '../webhooks/support/admin';
import { paidPayment, USDC, waitForReturn } from '../refunds/support';

/** A Payment of 2 USDC paid with 1 USDC too much: one excess incident whose funds sit in escrow. */
async function overpaid(m: Merchant) {
  const h = await getHarness();
  const { payment, payer, escrow } = await paidPayment(m, 2, 1);
  const incident = await h.db.prisma.paymentIncident.findFirstOrThrow({ where: { paymentId: payment.id } });
  return { paymentId: payment.id as string, incidentId: incident.id, payer, escrow };
}

describe('Two people move money: an operator asks, another approves', () => {
  endsWithBooksChecked();
  let admin: AdminApi;
  let m: Merchant;
  let asker: TestOperator;
  let approver: TestOperator;
  before(async () => {
    admin = await startAdminApi({ allowPrivate: false, withEngine: true, withOperator: true, role: 'operator' });
    asker = admin.operator;
    approver = await createTestOperator('approver');
    m = await newMerchant();
  });
  after(() => admin.close());

  const recover = (paymentId: string, body: object, token = asker.token) =>
    admin.call('POST', `/admin/v1/payments/${paymentId}/incident-recoveries`, body, token);
  const decide = (id: string, verdict: 'approve' | 'reject', token: string, body: object = {}) =>
    admin.call('POST', `/admin/v1/approvals/${id}/${verdict}`, body, token);
  const recoveriesOf = async (paymentId: string) =>
    (await call(`/v2/payments/${paymentId}/incident-recoveries`, { credential: m.cred })).body.items as Array<{ id: string }>;

  test('a recovery to a new address waits for a second operator, the partner sees nothing until then, and it is paid only after approval', async () => {
    const h = await getHarness();
    const p = await overpaid(m);
    const target = (await newPayer(0n)).address;
    const asked = await recover(p.paymentId, { incidentId: p.incidentId, destinationAddress: target, reason: 'payer lost that key' });
    assert.equal(asked.status, 202, JSON.stringify(asked.body));
    const approval = asked.body.approval;
    assert.deepEqual(
      [approval.status, approval.action, approval.target, approval.requestedBy, approval.params],
      [
        'pending',
        'recover-incident',
        { type: 'payment', id: p.paymentId },
        asker.email,
        { incidentId: p.incidentId, destinationAddress: target },
      ],
    );
    // Nothing created, nothing sent, nothing a partner can see.
    assert.deepEqual(await recoveriesOf(p.paymentId), []);
    assert.equal(await h.db.prisma.fundReturn.count({ where: { paymentId: p.paymentId } }), 0);
    assert.equal(await tokenBalance(target), 0n);
    const pending = await admin.call('GET', '/admin/v1/approvals');
    assert.ok(
      pending.body.items.some((a: { id: string }) => a.id === approval.id),
      'listed as pending',
    );

    // Not the asker, not a viewer, not an operator without the approver role.
    assert.equal((await decide(approval.id, 'approve', asker.token)).status, 403);
    assert.equal((await decide(approval.id, 'approve', (await createTestOperator('viewer')).token)).status, 403);
    assert.equal((await decide(approval.id, 'approve', (await createTestOperator('operator')).token)).status, 403);
    const selfApprover = await createTestOperator('approver');
    const own = await recover(p.paymentId, { incidentId: p.incidentId, destinationAddress: target, reason: 'mine' }, selfApprover.token);
    assert.equal(own.status, 202);
    assert.equal((await decide(own.body.approval.id, 'approve', selfApprover.token)).status, 403, 'an approver never approves their own');
    const refusal = await h.db.prisma.operatorAction.findFirstOrThrow({
      where: { targetType: 'approval', targetId: own.body.approval.id },
    });
    assert.deepEqual([refusal.actor, refusal.action, refusal.outcome], [selfApprover.email, 'approve', 'refused']);
    assert.equal((await decide(own.body.approval.id, 'reject', approver.token, { reason: 'duplicate' })).body.approval.status, 'rejected');
    assert.deepEqual(await recoveriesOf(p.paymentId), []);

    const approved = await decide(approval.id, 'approve', approver.token);
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    assert.deepEqual([approved.body.approval.status, approved.body.approval.decidedBy], ['approved', approver.email]);
    const recoveryId: string = approved.body.result.incidentRecovery.id;
    assert.equal(approved.body.approval.resultId, recoveryId);
    await waitForReturn(m, p.paymentId, 'incident-recoveries', recoveryId, 'confirmed');
    assert.equal(await tokenBalance(target), USDC(1));
    assert.equal(await tokenBalance(p.escrow), 0n);
    const row = await h.db.prisma.fundReturn.findUniqueOrThrow({ where: { id: recoveryId } });
    assert.deepEqual([row.approvalId, row.actor, row.toAddress], [approval.id, approver.email, target.toLowerCase()]);

    // Both people are in the one audit.
    const audit = await h.db.prisma.operatorAction.findMany({
      where: { OR: [{ targetId: p.paymentId }, { targetId: approval.id }] },
      orderBy: { createdAt: 'asc' },
    });
    assert.deepEqual(
      audit
        .filter((a) => a.targetId === approval.id || (a.details as { approvalId?: string }).approvalId === approval.id)
        .map((a) => [a.actor, a.action, a.outcome]),
      [
        [asker.email, 'recover-incident', 'requested'],
        [approver.email, 'approve', 'applied'],
        [approver.email, 'recover-incident', 'created'],
      ],
    );
  });

  test('to the payer it goes at once; a decided or expired request is not decided again', async () => {
    const h = await getHarness();
    const p = await overpaid(m);
    const toPayer = await recover(p.paymentId, { incidentId: p.incidentId, destinationAddress: p.payer.address, reason: 'payer asked' });
    assert.equal(toPayer.status, 201, JSON.stringify(toPayer.body));
    await waitForReturn(m, p.paymentId, 'incident-recoveries', toPayer.body.incidentRecovery.id, 'confirmed');

    const q = await overpaid(m);
    const elsewhere = (await newPayer(0n)).address;
    const asked = await recover(q.paymentId, { incidentId: q.incidentId, destinationAddress: elsewhere, reason: 'x' });
    assert.equal(asked.status, 202);
    await h.db.prisma.operatorApproval.update({ where: { id: asked.body.approval.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const late = await decide(asked.body.approval.id, 'approve', approver.token);
    assert.equal(late.status, 409, JSON.stringify(late.body));
    assert.match(late.body.error.message, /expired/);
    assert.equal((await h.db.prisma.operatorApproval.findUniqueOrThrow({ where: { id: asked.body.approval.id } })).status, 'expired');
    const listed = await admin.call('GET', '/admin/v1/approvals');
    assert.ok(!listed.body.items.some((a: { id: string }) => a.id === asked.body.approval.id), 'an expired request is not pending');
    assert.deepEqual(await recoveriesOf(q.paymentId), []);
    assert.equal(await tokenBalance(elsewhere), 0n);
    assert.equal((await decide('approval_doesnotexist', 'approve', approver.token)).status, 404);
  });

  test('an approval whose action is refused when carried out (the incident recovered meanwhile) is failed, says why, and moves nothing', async () => {
    const h = await getHarness();
    const p = await overpaid(m);
    const elsewhere = (await newPayer(0n)).address;
    const asked = await recover(p.paymentId, { incidentId: p.incidentId, destinationAddress: elsewhere, reason: 'new wallet' });
    assert.equal(asked.status, 202);
    // Meanwhile the payer gets the funds back at once, as any operator may do.
    const toPayer = await recover(p.paymentId, { incidentId: p.incidentId, destinationAddress: p.payer.address, reason: 'payer asked' });
    assert.equal(toPayer.status, 201, JSON.stringify(toPayer.body));

    const approved = await decide(asked.body.approval.id, 'approve', approver.token);
    assert.equal(approved.status, 409, JSON.stringify(approved.body));
    const row = await h.db.prisma.operatorApproval.findUniqueOrThrow({ where: { id: asked.body.approval.id } });
    assert.deepEqual([row.status, row.decidedBy, row.resultId], ['failed', approver.id, null]);
    assert.equal(row.failure, approved.body.error.message, 'the refusal is kept with the approval');
    const listed = await admin.call('GET', '/admin/v1/approvals?status=all');
    const seen = listed.body.items.find((a: { id: string }) => a.id === row.id);
    assert.deepEqual([seen?.status, seen?.failure], ['failed', row.failure], JSON.stringify(listed.body.items.slice(0, 3)));
    assert.equal((await decide(row.id, 'approve', approver.token)).status, 409, 'a failed request is not approved again');

    await waitForReturn(m, p.paymentId, 'incident-recoveries', toPayer.body.incidentRecovery.id, 'confirmed');
    assert.deepEqual(
      (await recoveriesOf(p.paymentId)).map((r) => r.id),
      [toPayer.body.incidentRecovery.id],
    );
    assert.equal(await tokenBalance(elsewhere), 0n);
  });
});
