import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import * as workflows from '../../workflows';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { authenticateApp } from '../../src/domain/apps/apps';
import { createPayment as createPaymentRow } from '../../src/domain/payments/create-payment';
import { ZCreatePayment } from '../../src/domain/payments/payment.schemas';
import { SERVICE_SCHEDULES } from '../../src/temporal/schedules';
import { mine, newPayer, payTo, setNativeBalance } from '../support/chain';
import { getHarness, TEST_SERVICE_SECRET } from '../support/harness';
import { terminateAtRest } from '../support/engine-clock';
import { createPayment, newMerchant, waitForPayment, type Merchant } from '../support/fixtures';
import { endsWithBooksChecked } from '../support/books';
import { awaitWorkflowResult } from '../support/workflow-result';

const USDC = 1_000_000n;

/** What create-payment commits when Temporal refuses the start: the row, its escrow address, no workflow. */
async function orphanPayment(m: Merchant, amount: string, expiresInSeconds = 600) {
  const h = await getHarness();
  const app = await authenticateApp(h.db.prisma, m.cred.appId, m.cred.appSecret);
  assert.ok(app);
  const input = ZCreatePayment.parse({
    intent: 'receive',
    amount,
    assetCode: 'USDC',
    chainId: h.chainId,
    destination: { type: 'upa', accountId: m.accountId },
    expiresInSeconds,
  });
  const unavailable = { startPayment: () => Promise.reject(new Error('Temporal is unavailable')) };
  await assert.rejects(
    createPaymentRow(
      { prisma: h.db.prisma, pool: h.db.pool, engine: unavailable, custody: h.chain.custody, serviceSecret: TEST_SERVICE_SECRET },
      app,
      h.environments.environments.sandbox,
      input,
      { idempotencyKey: `orphan-${process.pid}-${Date.now()}`, bodyHash: 'test' },
    ),
    /Temporal is unavailable/,
  );
  return h.db.prisma.payment.findFirstOrThrow({ where: { recipientAccountId: m.accountId }, orderBy: { createdAt: 'desc' } });
}

/** Tokens out of a service address again (gas from anvil), so the books and the chain agree for later files. */
async function moveOut(path: { purpose: 'treasury' | 'escrow'; index: number }, amountAtomic: bigint): Promise<void> {
  const h = await getHarness();
  const signer = h.chain.custody.signer(path);
  const chain = h.chain.chains.get(h.chainId);
  if ((await chain.getNativeBalance(signer.address)) < 10n ** 17n) await setNativeBalance(signer.address, 10n ** 18n);
  const to = privateKeyToAccount(generatePrivateKey()).address;
  const hash = await chain.sendTokenTransfer({ from: signer, token: SANDBOX_TOKEN_ADDRESS, to, amountAtomic });
  while ((await chain.getTransactionStatus(hash, 1)) !== 'confirmed') await mine(1);
}

describe('Orphan Payment reconciler (paymentReconciliationWorkflow)', () => {
  endsWithBooksChecked();

  test('starts the workflow of a Payment whose create could not, after the grace period; paid afterwards, the Payment succeeds', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    // A day to pay: awaiting a pass lets the test server skip time to the next timer, and a ten-minute
    // expiry could be it.
    const row = await orphanPayment(m, '3', 86_400);
    assert.equal(row.status, 'requires_payment_method');
    assert.equal(await h.engine.paymentWorkflowState(row.id), 'not_found');

    const early = await h.engine.runPaymentReconciliation({ graceSeconds: 3600 });
    assert.equal(early.started.includes(row.id), false);
    assert.equal(await h.engine.paymentWorkflowState(row.id), 'not_found');

    const pass = await h.engine.runPaymentReconciliation({ graceSeconds: 0 });
    assert.ok(pass.started.includes(row.id), JSON.stringify(pass));
    assert.ok(pass.checked >= 1 && pass.startedCount >= 1);
    assert.equal(pass.missing.includes(row.id), false);
    assert.equal(await h.engine.paymentWorkflowState(row.id), 'running');

    await payTo(await newPayer(3n * USDC), row.escrowAddress!, 3n * USDC);
    const paid = await waitForPayment(m, row.id, 'succeeded', (x) => x.status === 'succeeded');
    assert.equal(paid.paymentAmount.amountAtomic, '3000000');
    const again = await h.engine.runPaymentReconciliation({ graceSeconds: 0 });
    assert.equal(again.started.includes(row.id), false);
  });

  test('a Payment paid while no workflow ran is started by the transfer itself, resumed from the row, and succeeds', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const row = await orphanPayment(m, '2');
    await payTo(await newPayer(2n * USDC), row.escrowAddress!, 2n * USDC);
    const paid = await waitForPayment(m, row.id, 'succeeded', (x) => x.status === 'succeeded');
    assert.equal(paid.paymentAmount.amountAtomic, '2000000');
    const transfers = await h.db.prisma.paymentTransfer.findMany({ where: { paymentId: row.id } });
    assert.deepEqual(
      transfers.map((t) => [t.status, t.role]),
      [['confirmed', 'funding']],
    );
    const pass = await h.engine.runPaymentReconciliation({ graceSeconds: 0 });
    assert.equal(pass.started.includes(row.id), false);
  });

  test('a Payment that moved on but whose workflow is gone is alerted (critical), not restarted; the alert resolves once the Payment is terminal', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = (await createPayment(m, { amount: '3' })).body.payment;
    const escrow = await h.db.prisma.payment.findUniqueOrThrow({ where: { id: p.id } });
    await payTo(await newPayer(USDC), p.funding.depositAddress.address, USDC); // underpaid: processing
    await waitForPayment(m, p.id, 'processing, its transfer confirmed', (x) => x.status === 'processing' && x.stage === 'awaiting_funds');
    // Terminated while it waits for funds, with nothing out (the test server keeps the clock locked otherwise).
    await terminateAtRest(h.env, p.id, 'test: the workflow is gone');

    const pass = await h.engine.runPaymentReconciliation({ graceSeconds: 0 });
    assert.ok(pass.missing.includes(p.id), JSON.stringify(pass));
    assert.equal(pass.started.includes(p.id), false);
    assert.equal(await h.engine.paymentWorkflowState(p.id), 'closed');
    const subject = `payment:${p.id}`;
    const [alert, ...more] = await h.db.prisma.operatorAlert.findMany({ where: { kind: 'payment_workflow_missing', subject } });
    assert.equal(more.length, 0);
    assert.equal(alert!.severity, 'critical');
    assert.equal(alert!.resolvedAt, null);
    assert.deepEqual(alert!.details, {
      paymentId: p.id,
      appId: m.cred.appId,
      status: 'processing',
      statusVersion: 2,
      operationalState: 'normal',
      workflow: 'closed',
    });

    // Seen again: the same open alert, not a second one.
    await h.engine.runPaymentReconciliation({ graceSeconds: 0 });
    assert.equal(await h.db.prisma.operatorAlert.count({ where: { kind: 'payment_workflow_missing', subject } }), 1);

    // An operator repairs it by hand (here: fails it and returns the funds).
    await h.db.prisma.payment.update({ where: { id: p.id }, data: { status: 'failed', statusVersion: 3, failureCode: 'operator_failed' } });
    await moveOut({ purpose: 'escrow', index: escrow.escrowIndex }, USDC);
    await h.engine.runPaymentReconciliation({ graceSeconds: 0 });
    const resolved = await h.db.prisma.operatorAlert.findUniqueOrThrow({ where: { id: alert!.id } });
    assert.ok(resolved.resolvedAt instanceof Date);
  });
});

describe('Ledger reconciliation (ledgerReconciliationWorkflow)', () => {
  endsWithBooksChecked();

  test('a difference that survives the second look raises one alert, is not raised again while open, and is resolved once it is gone', async () => {
    const h = await getHarness();
    // The second look's pause (30 s in the service) runs in real time here: shortened, not skipped.
    const pass = () => h.engine.runLedgerReconciliation({ recheckAfterSeconds: 1 });
    // A registered address with no book: tokens sent to it are money the books don't know.
    const index = 920_000 + (process.pid % 10_000);
    const stray = h.chain.custody.deriveAddress({ purpose: 'treasury', index });
    await h.db.prisma.custodyAddress.createMany({
      data: [{ address: stray.toLowerCase(), purpose: 'treasury', custodyIndex: index }],
      skipDuplicates: true,
    });
    await h.chain.chains
      .get(h.chainId)
      .sendTokenTransfer({ from: await newPayer(4n * USDC), token: SANDBOX_TOKEN_ADDRESS, to: stray as Address, amountAtomic: 4n * USDC });
    const subject = `${h.chainId}:${SANDBOX_TOKEN_ADDRESS.toLowerCase()}:${stray.toLowerCase()}`;
    const alertsOf = () =>
      h.db.prisma.operatorAlert.findMany({ where: { kind: 'ledger_difference', subject }, orderBy: { createdAt: 'asc' } });

    const first = await pass();
    const listed = first.differences.find((d) => d.address?.toLowerCase() === stray.toLowerCase());
    assert.deepEqual(listed, {
      address: stray,
      purpose: 'treasury',
      book: null,
      chainId: h.chainId,
      token: SANDBOX_TOKEN_ADDRESS,
      ledgerAtomic: '0',
      chainAtomic: '4000000',
      inFlightAtomic: '0',
      differenceAtomic: '4000000',
    });
    assert.ok(first.alerts.raised >= 1);
    const [raised, ...more] = await alertsOf();
    assert.equal(more.length, 0);
    assert.equal(raised!.severity, 'warning'); // money the books don't know; missing money is critical
    assert.equal(raised!.resolvedAt, null);
    assert.deepEqual(raised!.details, listed);

    const second = await pass();
    assert.ok(second.differences.some((d) => d.address === stray));
    assert.deepEqual(
      (await alertsOf()).map((a) => [a.id, a.resolvedAt]),
      [[raised!.id, null]],
    );

    await moveOut({ purpose: 'treasury', index }, 4n * USDC);
    const third = await pass();
    assert.equal(
      third.differences.some((d) => d.address === stray),
      false,
    );
    const [after] = await alertsOf();
    assert.equal(after!.id, raised!.id);
    assert.ok(after!.resolvedAt instanceof Date, 'the alert of a difference that is gone is resolved');
    assert.ok(third.alerts.resolved >= 1);
  });
});

describe('Service schedules', () => {
  endsWithBooksChecked();

  test('each schedule starts a workflow the worker runs, every minute (orphans, ledger) or ten (deposits), and its action completes as the schedule would run it', async () => {
    const h = await getHarness();
    assert.deepEqual(
      SERVICE_SCHEDULES.map((s) => [s.scheduleId, s.workflowType, s.every]),
      [
        ['payment-reconciliation', 'paymentReconciliationWorkflow', '1 minute'],
        ['ledger-reconciliation', 'ledgerReconciliationWorkflow', '1 minute'],
        ['deposit-reconciliation', 'depositReconciliationWorkflow', '10 minutes'],
      ],
    );
    for (const s of SERVICE_SCHEDULES) {
      assert.ok(s.workflowType in workflows, `${s.workflowType} is not a workflow of the worker`);
      // The Java test server has no schedule API (CreateSchedule is UNIMPLEMENTED): run the action itself.
      const started = await h.env.client.workflow.start(s.workflowType, {
        taskQueue: h.taskQueue,
        workflowId: `${s.workflowId}-test-${Date.now()}`,
        // The ledger pass's second look pauses 30 s, in real time late in the suite: 1 s here.
        args: s.workflowType === 'ledgerReconciliationWorkflow' ? [{ ...(s.args[0] as object), recheckAfterSeconds: 1 }] : s.args,
        workflowExecutionTimeout: s.executionTimeout,
      });
      const result = await awaitWorkflowResult(h, started.workflowId);
      assert.equal(typeof result, 'object', `${s.scheduleId}: ${JSON.stringify(result)}`);
    }
  });
});
