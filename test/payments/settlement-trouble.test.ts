import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Address } from 'viem';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { mine, newPayer, payTo, setTreasuryGas, tokenBalance } from '../support/chain';
import { getHarness } from '../support/harness';
import { assertLedgerBalanced, createPayment, eventNames, getPayment, newMerchant, waitForPayment } from '../support/fixtures';
import { endsWithBooksChecked } from '../support/books';
import { runCli as cli } from '../deposits/helpers';
import { paymentWorkflowId } from '../../workflows/contracts/payment';
import { createTestOperator } from '../support/operators';
import { approveByCli, markSettledArgs, requestByCli, resolutionSignals } from '../support/approvals';

describe('Settlement trouble', () => {
  endsWithBooksChecked();

  test('a settlement that fails is retried (operationalState retrying) and then succeeds', async () => {
    const m = await newMerchant();
    const p = (await createPayment(m, { amount: '3' })).body.payment;
    const payer = await newPayer(3_000_000n);
    await setTreasuryGas(0n);
    try {
      await payTo(payer, p.funding.depositAddress.address, 3_000_000n);
      const retrying = await waitForPayment(m, p.id, 'retrying', (x) => x.operationalState === 'retrying');
      assert.equal(retrying.status, 'accepted');
      assert.equal(retrying.operationalReasonCode, 'settlement_failed');
      assert.ok(retrying.operationalUpdatedAt);
    } finally {
      await setTreasuryGas(100n * 10n ** 18n);
    }
    const done = await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
    assert.equal(done.operationalState, 'normal');
    assert.equal(done.operationalReasonCode, null);
    assert.equal(await tokenBalance(m.wallet), 2_955_000n);
    assert.ok(!(await eventNames(p.id)).includes('payment.requires_intervention'));
    await assertLedgerBalanced();
  });

  test('a spent retry budget holds the Payment in requires_intervention until an operator resolves it, by each action', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    /** A request leaves the Payment as it was: held, its workflow told nothing, no resolution recorded. */
    const assertStillHeld = async (paymentId: string) => {
      const { payment } = await getPayment(m, paymentId);
      assert.deepEqual([payment.status, payment.operationalState], ['accepted', 'requires_intervention']);
      assert.deepEqual(await resolutionSignals(paymentWorkflowId(paymentId)), []);
      assert.equal(await h.db.prisma.paymentResolution.count({ where: { paymentId } }), 0);
    };
    const payments = [];
    // Short backoffs: the budget is what is tested, not its pacing (seconds of real time per attempt).
    h.policies.payment = { retryBackoffSeconds: 0.2 };
    try {
      for (let i = 0; i < 3; i += 1) payments.push((await createPayment(m, { amount: '2' })).body.payment);
    } finally {
      delete h.policies.payment;
    }
    const payer = await newPayer(6_000_000n);
    await setTreasuryGas(0n);
    try {
      for (const p of payments) await payTo(payer, p.funding.depositAddress.address, 2_000_000n);
      for (const p of payments) {
        const held = await waitForPayment(m, p.id, 'requires_intervention', (x) => x.operationalState === 'requires_intervention');
        assert.equal(held.status, 'accepted', 'the financial status is preserved');
        assert.equal(held.operationalReasonCode, 'settlement_requires_intervention');
        assert.ok((await eventNames(p.id)).includes('payment.requires_intervention'));
      }
    } finally {
      await setTreasuryGas(100n * 10n ** 18n);
    }
    const [toRetry, toMark, toFail] = payments as [any, any, any];

    await cli(['payments', 'resolve', toRetry.id, '--action', 'retry', '--actor', 'ops@example', '--reason', 'treasury refilled']);
    const retried = await waitForPayment(m, toRetry.id, 'succeeded', (x) => x.status === 'succeeded');
    assert.equal(retried.operationalState, 'normal');

    // mark-settled and a funded Payment's fail wait for a second operator: one asks, an approver approves.
    const [requester, approver] = [await createTestOperator('operator'), await createTestOperator('approver')];
    const markArgs = (tx: string) => markSettledArgs('payments', toMark.id, tx, requester.email, 'paid out of the escrow by hand');
    // An operator's word is checked against the chain when it is asked for: a hash that pays nobody is
    // refused, the hold stays and nothing waits for an approval.
    await assert.rejects(
      cli(markArgs(`0x${'ab'.repeat(32)}`)),
      (err: { code?: number; stderr?: string }) => err.code === 1 && /not on the chain/.test(err.stderr ?? ''),
    );
    // So is a real payment of the right amount to the right wallet that did not come from the escrow.
    const chain = h.chain.chains.get(h.chainId);
    const net = BigInt(toMark.fees.merchantNetAmountAtomic);
    const outsider = await newPayer(net);
    const notOurs = await chain.sendTokenTransfer({
      from: outsider,
      token: SANDBOX_TOKEN_ADDRESS,
      to: m.wallet as Address,
      amountAtomic: net,
    });
    await mine(2);
    await assert.rejects(
      cli(markArgs(notOurs)),
      (err: { code?: number; stderr?: string }) => err.code === 1 && /does not move/.test(err.stderr ?? ''),
    );
    assert.equal((await getPayment(m, toMark.id)).payment.operationalState, 'requires_intervention');
    assert.equal(await h.db.prisma.operatorApproval.count({ where: { targetId: toMark.id } }), 0);
    // The operator pays the net amount out of the escrow by hand; the service then pays the fees.
    const escrowRow = await h.db.prisma.payment.findUniqueOrThrow({ where: { id: toMark.id } });
    const escrow = h.chain.custody.signer({ purpose: 'escrow', index: escrowRow.escrowIndex });
    await chain.sendNative({ from: outsider, to: escrow.address, amountWei: 10n ** 16n });
    const tx = await chain.sendTokenTransfer({ from: escrow, token: SANDBOX_TOKEN_ADDRESS, to: m.wallet as Address, amountAtomic: net });
    await mine(2);
    const markRequest = await requestByCli(markArgs(tx));
    assert.deepEqual(
      [markRequest.action, markRequest.target, markRequest.params, markRequest.requestedBy],
      ['mark-settled', { type: 'payment', id: toMark.id }, { action: 'mark-settled', txHash: tx }, requester.email],
    );
    // Asked, not done: the Payment is still held and its workflow was told nothing.
    await assertStillHeld(toMark.id);
    const markApproved = await approveByCli(markRequest.id, approver);
    assert.deepEqual(markApproved.result, { paymentId: toMark.id, action: 'mark-settled', signalled: true });
    assert.deepEqual(
      (await resolutionSignals(paymentWorkflowId(toMark.id))).map((r) => [r.action, r.txHash, r.actor]),
      [['mark-settled', tx, approver.email]],
    );
    const marked = await waitForPayment(m, toMark.id, 'succeeded', (x) => x.status === 'succeeded');
    assert.equal(marked.operationalState, 'normal');
    assert.equal(await tokenBalance(escrow.address), 0n, 'fees paid by the service, nothing left in escrow');
    assert.equal((await h.db.prisma.payment.findUniqueOrThrow({ where: { id: toMark.id } })).settlementTxHash, tx.toLowerCase());

    // Its escrow holds the payer's funds: failing it is a request too.
    const failRequest = await requestByCli([
      'payments',
      'resolve',
      toFail.id,
      '--action',
      'fail',
      '--reason',
      'customer refunded off-platform',
      '--actor',
      requester.email,
    ]);
    assert.deepEqual(
      [failRequest.action, failRequest.target, failRequest.params, failRequest.reason],
      ['fail', { type: 'payment', id: toFail.id }, { action: 'fail' }, 'customer refunded off-platform'],
    );
    await assertStillHeld(toFail.id);
    assert.ok(!(await eventNames(toFail.id)).includes('payment.failed'));
    const failApproved = await approveByCli(failRequest.id, approver);
    assert.deepEqual(failApproved.result, { paymentId: toFail.id, action: 'fail', signalled: true });
    const failed = await waitForPayment(m, toFail.id, 'failed', (x) => x.status === 'failed');
    assert.deepEqual(failed.failure, { code: 'operator_failed', message: 'customer refunded off-platform' });
    assert.ok((await eventNames(toFail.id)).includes('payment.failed'));

    const resolutions = await h.db.prisma.paymentResolution.findMany({ where: { paymentId: { in: payments.map((p) => p.id) } } });
    assert.deepEqual(
      resolutions.map((r) => [r.paymentId, r.action, r.actor]).sort(),
      [
        [toRetry.id, 'retry', 'ops@example'],
        [toMark.id, 'mark-settled', approver.email],
        [toFail.id, 'fail', approver.email],
      ].sort(),
    );
    assert.equal(resolutions.find((r) => r.action === 'mark-settled')?.txHash, tx);
    // Audited: asked by one operator, approved and carried out by the other, each row naming the approval.
    const audit = await h.db.prisma.operatorAction.findMany({
      where: { targetId: { in: [toMark.id, toFail.id, markRequest.id, failRequest.id] }, outcome: { not: 'refused' } },
      orderBy: { createdAt: 'asc' },
    });
    assert.deepEqual(
      audit.map((a) => [a.targetId, a.action, a.outcome, a.actor, (a.details as { approvalId?: string } | null)?.approvalId ?? null]),
      [
        [toMark.id, 'mark-settled', 'requested', requester.email, markRequest.id],
        [markRequest.id, 'approve', 'applied', approver.email, null],
        [toMark.id, 'mark-settled', 'signalled', approver.email, markRequest.id],
        [toFail.id, 'fail', 'requested', requester.email, failRequest.id],
        [failRequest.id, 'approve', 'applied', approver.email, null],
        [toFail.id, 'fail', 'signalled', approver.email, failRequest.id],
      ],
    );
    await assertLedgerBalanced();
  });

  test('resolving a Payment that is not held is refused by the CLI', async () => {
    const m = await newMerchant();
    const p = (await createPayment(m)).body.payment;
    await assert.rejects(cli(['payments', 'resolve', p.id, '--action', 'retry']), (err: { code?: number; stderr?: string }) => {
      assert.equal(err.code, 1);
      assert.match(err.stderr ?? '', /not held/);
      return true;
    });
  });
});
