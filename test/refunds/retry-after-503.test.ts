import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { call, type ApiResponse } from '../support/api-client';
import { tokenBalance } from '../support/chain';
import { apiDepsOnHarness, getHarness } from '../support/harness';
import { listenApi } from '../support/bounded-api';
import { until } from '../support/until';
import { endsWithBooksChecked } from '../support/books';
import { assertLedgerBalanced, newMerchant, type Merchant } from '../support/fixtures';
import { fundedVault, key, paidPayment, USDC, waitForReturn } from './support';

/** As the Temporal client raises an unreachable engine (a ServiceError around gRPC UNAVAILABLE), without importing the client. */
function engineUnreachable(): Error {
  const grpc = Object.assign(new Error('14 UNAVAILABLE: connection refused'), { code: 14, details: 'connection refused', metadata: {} });
  return Object.assign(new Error('Failed to start Workflow', { cause: grpc }), { name: 'ServiceError' });
}

/** POSTs `rawBody` byte for byte under `idempotencyKey`. */
function send(m: Merchant, path: string, idempotencyKey: string, rawBody: string, baseUrl?: string): Promise<ApiResponse> {
  return call(path, {
    method: 'POST',
    credential: m.cred,
    headers: { 'idempotency-key': idempotencyKey, 'content-type': 'application/json' },
    rawBody,
    ...(baseUrl ? { baseUrl } : {}),
  });
}

describe('A refund or recovery whose first try answered 503', () => {
  endsWithBooksChecked();

  test('the same-key byte-identical retry answers the return the first try made, one workflow sends it once, and another request under the key gets no part of it', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const vault = await fundedVault(m, 5);
    const { payment, payer } = await paidPayment(m, 3, 1);
    const [incident] = (await call(`/v2/payments/${payment.id}/incidents`, { credential: m.cred })).body.items;
    const payerBefore = await tokenBalance(payer.address);
    const vaultBefore = await tokenBalance(vault.address);
    const refunds = `/v2/payments/${payment.id}/refunds`;
    const recoveries = `/v2/payments/${payment.id}/incident-recoveries`;
    const refund = { key: key('refund'), body: JSON.stringify({ amount: '1', reason: 'returned goods' }) };
    const recovery = { key: key('recovery'), body: JSON.stringify({ incidentId: incident.id }) };
    const other = { key: key('other'), body: JSON.stringify({ amount: '0.5' }) };

    // The first tries, with the engine unreachable: each row commits, its workflow's start fails.
    const down = await listenApi(
      await apiDepsOnHarness({
        engine: h.engine,
        returns: { startFundReturn: () => Promise.reject(engineUnreachable()) },
        chains: h.chain.chains,
      }),
    );
    try {
      for (const [path, req] of [
        [refunds, refund],
        [recoveries, recovery],
        [refunds, other],
      ] as const) {
        const first = await send(m, path, req.key, req.body, down.baseUrl);
        assert.equal(first.status, 503, first.text);
        assert.equal(first.body.error.code, 'payment_provider_unavailable', first.text);
      }
    } finally {
      await down.close();
    }
    const rowOf = (k: string) =>
      h.db.prisma.fundReturn.findUniqueOrThrow({ where: { appId_idempotencyKey: { appId: m.cred.appId, idempotencyKey: k } } });
    const [refundRow, recoveryRow, otherRow] = [await rowOf(refund.key), await rowOf(recovery.key), await rowOf(other.key)];
    for (const r of [refundRow, recoveryRow, otherRow]) assert.equal(r.status, 'pending');

    // The retries, on an API whose every workflow start is recorded with its outcome.
    const starts: Array<[string, string]> = [];
    const returns = {
      async startFundReturn(id: string, confirmations: number) {
        const outcome = await h.engine.startFundReturn(id, confirmations);
        starts.push([id, outcome]);
        return outcome;
      },
    };
    const up = await listenApi(await apiDepsOnHarness({ engine: h.engine, returns, chains: h.chain.chains }));
    try {
      // Another request under a released key is refused, whatever its bytes: never answered with what the key made.
      const changed = fc
        .record({
          amount: fc.constantFrom(undefined, '0.5', '0.50', '0.25'),
          reason: fc.option(fc.stringMatching(/^[a-z ]{1,8}$/), { nil: undefined }),
        })
        .map((b) => JSON.stringify(b))
        .filter((b) => b !== other.body);
      await fc.assert(
        fc.asyncProperty(changed, async (body) => {
          const res = await send(m, refunds, other.key, body, up.baseUrl);
          assert.equal(res.status, 409, res.text);
          assert.equal(res.body.error.code, 'idempotency_conflict', res.text);
        }),
        { numRuns: 8 },
      );
      const spaced = await send(m, refunds, other.key, ` ${other.body}`, up.baseUrl);
      assert.equal(spaced.status, 409, `not byte-identical: ${spaced.text}`);
      const elsewhere = await send(m, recoveries, recovery.key, JSON.stringify({ incidentId: incident.id, reason: 'x' }), up.baseUrl);
      assert.equal(elsewhere.status, 409, elsewhere.text);
      assert.equal(elsewhere.body.error.code, 'idempotency_conflict', elsewhere.text);

      // The refund is retried before anything started its workflow: the retry starts it.
      const refunded = await send(m, refunds, refund.key, refund.body, up.baseUrl);
      assert.equal(refunded.status, 201, refunded.text);
      assert.equal(refunded.headers.get('idempotent-replayed'), null);
      assert.equal(refunded.body.refund.id, refundRow.id);
      assert.equal(refunded.body.refund.amount.amountAtomic, USDC(1).toString());
      assert.equal(refunded.body.refund.reason, 'returned goods');

      // The reconciliation pass starts the other orphans first; the recovery's retry then finds its workflow running.
      await h.engine.runPaymentReconciliation({ graceSeconds: 0 });
      const recovered = await send(m, recoveries, recovery.key, recovery.body, up.baseUrl);
      assert.equal(recovered.status, 201, recovered.text);
      assert.equal(recovered.body.incidentRecovery.id, recoveryRow.id);
      assert.equal(recovered.body.incidentRecovery.incidentId, incident.id);
      assert.deepEqual(
        starts.filter(([id]) => id === refundRow.id || id === recoveryRow.id),
        [
          [refundRow.id, 'started'],
          [recoveryRow.id, 'exists'],
        ],
        'the retry started only the workflow nothing had started',
      );

      // A third try replays the answer.
      for (const [path, req, answer] of [
        [refunds, refund, refunded],
        [recoveries, recovery, recovered],
      ] as const) {
        const replay = await send(m, path, req.key, req.body, up.baseUrl);
        assert.equal(replay.status, 201, replay.text);
        assert.equal(replay.headers.get('idempotent-replayed'), 'true');
        assert.deepEqual(replay.body, answer.body);
      }
    } finally {
      await up.close();
    }

    for (const r of [refundRow, otherRow]) await waitForReturn(m, payment.id, 'refunds', r.id, 'confirmed');
    await waitForReturn(m, payment.id, 'incident-recoveries', recoveryRow.id, 'confirmed');
    // The row reads confirmed in the workflow's last step; its run completes just after.
    for (const r of [refundRow, recoveryRow, otherRow]) {
      const status = async () => (await h.engine.describeWorkflow(`fund-return:${r.id}`)).status;
      await until(async () => (await status()) !== 'RUNNING', `the workflow of ${r.id} to end`, 60_000);
      assert.equal(await status(), 'COMPLETED', `the workflow of ${r.id}`);
    }
    // Each return sent once: 1 and 0.5 from the vault, the 1 of the incident from escrow.
    assert.equal(await h.db.prisma.fundReturn.count({ where: { paymentId: payment.id } }), 3);
    assert.equal(await tokenBalance(payer.address), payerBefore + USDC(2) + USDC(1) / 2n);
    assert.equal(await tokenBalance(vault.address), vaultBefore - USDC(1) - USDC(1) / 2n);
    for (const r of [refundRow, recoveryRow, otherRow]) {
      const legs = await h.db.prisma.settlementLeg.count({ where: { sourceId: r.id, status: 'confirmed' } });
      assert.equal(legs, 1, `one confirmed send of ${r.id}`);
    }
    await assertLedgerBalanced();
  });
});
