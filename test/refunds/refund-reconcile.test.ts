import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call } from '../support/api-client';
import { tokenBalance } from '../support/chain';
import { apiDepsOnHarness, getHarness } from '../support/harness';
import { listenApi } from '../support/bounded-api';
import { endsWithBooksChecked } from '../support/books';
import { assertLedgerBalanced, newMerchant } from '../support/fixtures';
import { fundedVault, key, paidPayment, USDC, waitForReturn } from './support';

describe('Orphaned fund returns', () => {
  endsWithBooksChecked();

  test('a refund and a recovery whose workflow could not start stay pending until the reconciler starts them; then they are paid once', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    await fundedVault(m, 5);
    const { payment, payer } = await paidPayment(m, 3, 1);
    const before = await tokenBalance(payer.address);
    const [incident] = (await call(`/v2/payments/${payment.id}/incidents`, { credential: m.cred })).body.items;
    // The service's API with Temporal unavailable for fund returns: each row commits, its start fails.
    const unavailable = { startFundReturn: () => Promise.reject(new Error('Temporal is unavailable')) };
    const api = await listenApi(await apiDepsOnHarness({ engine: h.engine, returns: unavailable, chains: h.chain.chains }));
    try {
      for (const [path, body] of [
        ['refunds', {}],
        ['incident-recoveries', { incidentId: incident.id }],
      ] as const) {
        const res = await call(`/v2/payments/${payment.id}/${path}`, {
          baseUrl: api.baseUrl,
          credential: m.cred,
          headers: { 'idempotency-key': key('orphan') },
          body,
        });
        assert.ok(res.status >= 500, res.text);
      }
    } finally {
      await api.close();
    }
    const rows = await h.db.prisma.fundReturn.findMany({ where: { paymentId: payment.id }, orderBy: { kind: 'asc' } });
    assert.deepEqual(
      rows.map((r) => [r.kind, r.status]),
      [
        ['incident_recovery', 'pending'],
        ['refund', 'pending'],
      ],
    );

    await h.engine.runPaymentReconciliation({ graceSeconds: 0 });
    for (const r of rows) {
      assert.equal((await h.engine.describeWorkflow(`fund-return:${r.id}`)).status.length > 0, true, `the workflow of ${r.id} was started`);
      await waitForReturn(m, payment.id, r.kind === 'refund' ? 'refunds' : 'incident-recoveries', r.id, 'confirmed');
    }
    assert.equal(await tokenBalance(payer.address), before + USDC(4));
    // A second pass starts nothing again.
    await h.engine.runPaymentReconciliation({ graceSeconds: 0 });
    assert.equal(await tokenBalance(payer.address), before + USDC(4));
    await assertLedgerBalanced();
  });
});
