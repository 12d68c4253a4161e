import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { getBrowser } from '../support/browser';
import { getHarness } from '../support/harness';
import { terminateAtRest } from '../support/engine-clock';
import { createPayment, newMerchant } from '../support/fixtures';
import { paymentReconciliationWorkflowId } from '../../workflows/contracts/payment-reconciliation';
import { RECONCILIATION_ALERT_KINDS } from '../../src/domain/monitoring/reconciliation-runs';
import { createTestOperator } from '../support/operators';
import { newConsole, pageProblems, signIn, UI, type ConsoleInBrowser } from '../console/support';

void getBrowser();

/**
 * The operator console's Alerts page against real reconciliation passes. The passes read and act on
 * the whole shared database (every earlier test's Payments, deposits and returns), so this file runs
 * among the suite's other reconciliation tests, after the rest, not in the middle of it.
 */
describe('Operator console: open alerts and the last run of each reconciliation', () => {
  let web: ConsoleInBrowser;
  before(async () => {
    web = await newConsole();
  });
  after(() => web?.close());

  test('lists open alerts, each linked to its Payment, and the last pass of each reconciliation with its outcome; a pass that finds the problem gone takes the alert off', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = (await createPayment(m)).body.payment;
    // A Payment whose workflow is gone: the Payment pass alerts it (critical), it does not restart it.
    await terminateAtRest(h.env, p.id, 'test: the workflow is gone');
    const before = Date.now();
    const paymentPass = await h.engine.runPaymentReconciliation({ graceSeconds: 0 });
    assert.ok(paymentPass.missing.includes(p.id), JSON.stringify(paymentPass));
    const ledgerPass = await h.engine.runLedgerReconciliation({ recheckAfterSeconds: 1 });
    const depositPass = await h.engine.reconcileDeposits({});
    const alert = await h.db.prisma.operatorAlert.findFirstOrThrow({
      where: { kind: 'payment_workflow_missing', subject: `payment:${p.id}`, resolvedAt: null },
    });

    await signIn(web.page, web.baseUrl, await createTestOperator('viewer'));
    assert.equal(new URL(web.page.url()).pathname, '/console', 'signed in');
    await web.page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Alerts' }).click();
    await web.page.waitForLoadState('domcontentloaded');
    assert.equal(new URL(web.page.url()).pathname, '/console/alerts');
    assert.deepEqual(await pageProblems(web.page), []);
    if (process.env.SCREENSHOT_DIR) {
      mkdirSync(process.env.SCREENSHOT_DIR, { recursive: true });
      await web.page.screenshot({ path: path.join(process.env.SCREENSHOT_DIR, 'console-alerts.png'), fullPage: true });
    }

    const row = web.page.locator(`tr[data-alert="${alert.id}"]`);
    const cells = await row.locator('td').allTextContents();
    assert.deepEqual(cells.slice(0, 4), ['payment_workflow_missing', 'critical', `payment ${p.id}`, alert.createdAt.toISOString()]);
    assert.match(cells[5]!, /workflow=closed/);
    assert.match(cells[5]!, new RegExp(`paymentId=${p.id}`));
    assert.equal(await row.getByRole('link', { name: `payment ${p.id}` }).getAttribute('href'), `/console/payments/${p.id}`);

    // Each reconciliation's last pass is the one just run, finished, its outcome what the pass found.
    const runCells = async (name: string) => web.page.locator(`tr[data-reconciliation="${name}"] td`).allTextContents();
    const expected = {
      'payment-reconciliation': await h.db.prisma.operatorAlert.count({
        where: { kind: { in: [...RECONCILIATION_ALERT_KINDS['payment-reconciliation']] }, resolvedAt: null },
      }),
      'ledger-reconciliation': ledgerPass.differenceCount,
      'deposit-reconciliation': depositPass.reversed.length,
    };
    for (const [name, discrepancies] of Object.entries(expected)) {
      const [finished, started, outcome, , , inProgress] = await runCells(name);
      assert.ok(Date.parse(finished!) >= before - 1000, `${name} finished at ${finished}, after the test began`);
      assert.ok(Date.parse(started!) <= Date.parse(finished!), `${name} started at ${started}, before it finished`);
      assert.equal(
        outcome,
        discrepancies === 0 ? 'clean' : `${discrepancies} ${discrepancies === 1 ? 'discrepancy' : 'discrepancies'}`,
        name,
      );
      assert.equal(inProgress, '—', `${name}: its pass finished`);
    }
    assert.ok(expected['payment-reconciliation'] >= 1);
    const paymentRow = web.page.locator('tr[data-reconciliation="payment-reconciliation"]');
    const workflowId = paymentReconciliationWorkflowId(paymentPass.startedAt);
    assert.equal(
      await paymentRow.getByRole('link', { name: 'Temporal UI' }).getAttribute('href'),
      `${UI}/namespaces/default/workflows/${encodeURIComponent(workflowId)}`,
    );

    // Its open alerts of one kind, from the reconciliation's row.
    await paymentRow.getByRole('link', { name: /payment_workflow_missing$/ }).click();
    await web.page.waitForLoadState('domcontentloaded');
    assert.equal(new URL(web.page.url()).searchParams.get('kind'), 'payment_workflow_missing');
    assert.equal(await web.page.locator(`tr[data-alert="${alert.id}"]`).count(), 1);
    assert.deepEqual(
      [...new Set(await web.page.locator('table.alerts tbody tr td:first-child').allTextContents())],
      ['payment_workflow_missing'],
    );
    assert.deepEqual(await pageProblems(web.page), []);

    // Repaired by hand (failed, nothing was paid): the next pass resolves the alert, and the page says so.
    await h.db.prisma.payment.update({ where: { id: p.id }, data: { status: 'failed', statusVersion: 2, failureCode: 'operator_failed' } });
    const again = await h.engine.runPaymentReconciliation({ graceSeconds: 0 });
    await web.page.goto(`${web.baseUrl}/console/alerts`);
    assert.equal(await web.page.locator(`tr[data-alert="${alert.id}"]`).count(), 0, 'the resolved alert is not listed');
    const [finished] = await runCells('payment-reconciliation');
    assert.equal(
      await paymentRow.getByRole('link', { name: 'Temporal UI' }).getAttribute('href'),
      `${UI}/namespaces/default/workflows/${encodeURIComponent(paymentReconciliationWorkflowId(again.startedAt))}`,
    );
    assert.ok(Date.parse(finished!) >= Date.parse(alert.createdAt.toISOString()));
  });
});
