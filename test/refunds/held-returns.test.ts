import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Address, Hash } from 'viem';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { call } from '../support/api-client';
import { eventually, mine, newPayer, payTo, tokenBalance } from '../support/chain';
import { getHarness } from '../support/harness';
import { endsWithBooksChecked } from '../support/books';
import { cli } from '../support/cli';
import { assertLedgerBalanced, newMerchant, type Merchant } from '../support/fixtures';
import { createTestOperator } from '../support/operators';
import { startAdminApi, type AdminApi } from '../webhooks/support/admin';
import { awaitWorkflowResult } from '../support/workflow-result';
import { heldRecovery } from './held-returns';

async function returnRow(id: string) {
  const h = await getHarness();
  return h.db.prisma.fundReturn.findUniqueOrThrow({ where: { id } });
}

async function waitForReturnStatus(id: string, status: string) {
  return eventually(async (saw) => {
    const r = await returnRow(id);
    saw({ id, status: r.status });
    return r.status === status ? r : undefined;
  }, `${id} ${status}`);
}

async function auditOf(id: string) {
  const h = await getHarness();
  const rows = await h.db.prisma.operatorAction.findMany({
    where: { targetType: 'fund_return', targetId: id },
    orderBy: { createdAt: 'asc' },
  });
  return rows.map((r) => [r.channel, r.actor, r.action, r.outcome]);
}

describe('Held fund returns: an operator releases them', () => {
  endsWithBooksChecked();
  let m: Merchant;
  let admin: AdminApi;
  before(async () => {
    m = await newMerchant();
    admin = await startAdminApi({ allowPrivate: false, withEngine: true, withOperator: true });
  });
  after(async () => {
    await admin?.close();
  });

  test('a recovery whose leg reverted is held; the CLI retries it: sent again, confirmed, paid once, posted, audited', async () => {
    const held = await heldRecovery(m);
    const before = await tokenBalance(held.payer.address);
    const row = await returnRow(held.recoveryId);
    assert.equal(row.failureReason, 'transfer_reverted');
    const incident = (await getHarness()).db.prisma.paymentIncident;
    assert.equal((await incident.findUniqueOrThrow({ where: { id: held.incidentId } })).status, 'requires_intervention');

    const out = await cli([
      'fund-returns',
      'resolve',
      held.recoveryId,
      '--action',
      'retry',
      '--actor',
      'ops:alice',
      '--reason',
      'escrow funded again',
    ]);
    assert.deepEqual(out, { fundReturnId: held.recoveryId, action: 'retry', signalled: true });
    const done = await waitForReturnStatus(held.recoveryId, 'confirmed');
    assert.notEqual(done.transactionHash, held.revertedTxHash.toLowerCase());
    assert.equal(await tokenBalance(held.payer.address), before + held.amountAtomic);
    assert.equal(await tokenBalance(held.escrow), 0n);
    assert.equal((await incident.findUniqueOrThrow({ where: { id: held.incidentId } })).status, 'confirmed');
    assert.deepEqual(await auditOf(held.recoveryId), [['cli', 'ops:alice', 'retry', 'signalled']]);
    assert.deepEqual(await awaitWorkflowResult(await getHarness(), `fund-return:${held.recoveryId}`), { status: 'confirmed' });
    // Released: a second retry is refused, with the reason.
    await assert.rejects(
      cli(['fund-returns', 'resolve', held.recoveryId, '--action', 'retry', '--actor', 'ops:alice']),
      (err: { code?: number; stderr?: string }) => {
        assert.equal(err.code, 1);
        assert.match(err.stderr ?? '', /is not held \(status confirmed\)/);
        return true;
      },
    );
    await assertLedgerBalanced();
  });

  test('the admin API marks a held recovery settled with a payout made by hand, after checking it on chain (token, recipient, amount)', async () => {
    const h = await getHarness();
    const held = await heldRecovery(m);
    const route = `/admin/v1/fund-returns/${held.recoveryId}/resolve`;
    const mark = (txHash: string) => admin.call('POST', route, { action: 'mark-settled', txHash, reason: 'paid by hand' });

    // Not a payout of this return: the reverted leg, and a transfer of the payer's own.
    const reverted = await mark(held.revertedTxHash);
    assert.equal(reverted.status, 400, JSON.stringify(reverted.body));
    assert.match(reverted.body.error.message, /reverted/);
    const stranger = await newPayer(held.amountAtomic);
    const strangers = await payTo(stranger, held.payer.address, held.amountAtomic);
    await mine(2); // at depth: refused for what it moves, not for being shallow
    const wrong = await mark(strangers);
    assert.equal(wrong.status, 400, JSON.stringify(wrong.body));
    assert.match(wrong.body.error.message, /does not move 1000000 of .* from .* to /);
    assert.equal((await returnRow(held.recoveryId)).status, 'requires_intervention');

    // The operator pays it with the escrow's key: exactly the amount, to the recovery's destination.
    const escrowKey = h.chain.custody.signer({ purpose: 'escrow', index: held.escrowIndex });
    const chain = h.chain.chains.get(h.chainId);
    const byHand: Hash = await chain.sendTokenTransfer({
      from: escrowKey,
      token: SANDBOX_TOKEN_ADDRESS,
      to: held.payer.address as Address,
      amountAtomic: held.amountAtomic,
    });
    await eventually(
      async () =>
        (await chain.getTransactionStatus(byHand, h.environments.environments.sandbox.networks[0]!.confirmations)) === 'confirmed',
      'the payout at depth',
      { mine: true },
    );
    // A mark-settled is a request: nothing is signalled until a second operator approves it.
    const asked = await mark(byHand);
    assert.equal(asked.status, 202, JSON.stringify(asked.body));
    const approvalId: string = asked.body.approval.id;
    assert.deepEqual(
      [asked.body.approval.status, asked.body.approval.action, asked.body.approval.requestedBy, asked.body.approval.params.txHash],
      ['pending', 'mark-settled', admin.operator.email, byHand],
    );
    assert.equal((await returnRow(held.recoveryId)).status, 'requires_intervention', 'still held while the request waits');
    const own = await admin.call('POST', `/admin/v1/approvals/${approvalId}/approve`, {});
    assert.equal(own.status, 403, 'the requester never approves their own request');
    const approver = await createTestOperator('approver');
    const ok = await admin.call('POST', `/admin/v1/approvals/${approvalId}/approve`, {}, approver.token);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual(ok.body.result, { fundReturnId: held.recoveryId, action: 'mark-settled', signalled: true });
    assert.deepEqual([ok.body.approval.status, ok.body.approval.decidedBy], ['approved', approver.email]);
    const twice = await admin.call('POST', `/admin/v1/approvals/${approvalId}/approve`, {}, approver.token);
    assert.equal(twice.status, 409, 'an approval is decided once');
    const done = await waitForReturnStatus(held.recoveryId, 'confirmed');
    assert.equal(done.transactionHash, byHand.toLowerCase());
    assert.equal(await tokenBalance(held.escrow), 0n);
    const posted = await h.db.prisma.ledgerPosting.count({
      where: { sourceType: 'payment', sourceId: held.paymentId, leg: `recovery:${held.recoveryId}` },
    });
    assert.equal(posted, 1);
    assert.deepEqual(await auditOf(held.recoveryId), [
      ['admin_api', admin.operator.email, 'mark-settled', 'refused'],
      ['admin_api', admin.operator.email, 'mark-settled', 'refused'],
      ['admin_api', admin.operator.email, 'mark-settled', 'requested'],
      ['admin_api', approver.email, 'mark-settled', 'signalled'],
    ]);
    const decisions = await h.db.prisma.operatorAction.findMany({
      where: { targetType: 'approval', targetId: approvalId },
      orderBy: { createdAt: 'asc' },
    });
    assert.deepEqual(
      decisions.map((d) => [d.actor, d.action, d.outcome]),
      [
        [admin.operator.email, 'approve', 'refused'],
        [approver.email, 'approve', 'applied'],
        [approver.email, 'approve', 'refused'],
      ],
    );
    await assertLedgerBalanced();
  });

  test('the admin API fails a held recovery: failed with the reason, the incident free to be recovered again; a fail without a reason is refused', async () => {
    const held = await heldRecovery(m);
    const route = `/admin/v1/fund-returns/${held.recoveryId}/resolve`;
    const noReason = await admin.call('POST', route, { action: 'fail' });
    assert.equal(noReason.status, 400, JSON.stringify(noReason.body));
    assert.equal(noReason.body.error.details.fields[0].field, 'body.reason');
    const res = await admin.call('POST', route, { action: 'fail', reason: 'payer unreachable' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const failed = await waitForReturnStatus(held.recoveryId, 'failed');
    assert.equal(failed.failureReason, 'payer unreachable');
    const h = await getHarness();
    assert.equal((await h.db.prisma.paymentIncident.findUniqueOrThrow({ where: { id: held.incidentId } })).status, 'failed');
    // The funds are still in escrow: a new recovery returns them.
    const again = await call(`/v2/payments/${held.paymentId}/incident-recoveries`, {
      credential: m.cred,
      headers: { 'idempotency-key': `again-${held.recoveryId}` },
      body: { incidentId: held.incidentId },
    });
    assert.equal(again.status, 201, again.text);
    await waitForReturnStatus(again.body.incidentRecovery.id, 'confirmed');
    assert.equal(await tokenBalance(held.escrow), 0n);
    await assertLedgerBalanced();
  });
});
