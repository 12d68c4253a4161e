import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { call, type ApiResponse } from '../support/api-client';
import { createDatabase } from '../../src/db/client';
import { listenApi } from '../support/bounded-api';
import { apiDepsOnHarness } from '../support/harness';
import { until } from '../support/until';
import { newPayer, payTo, tokenBalance } from '../support/chain';
import { getHarness } from '../support/harness';
import { endsWithBooksChecked } from '../support/books';
import { assertLedgerBalanced, createPayment, eventNames, newMerchant, waitForPayment, type Merchant } from '../support/fixtures';
import { startAdminApi } from '../webhooks/support/admin';
import { awaitWorkflowResult } from '../support/workflow-result';
import { cli } from '../support/cli';
import { recoverIncident } from '../../src/domain/operators/operator-actions';
import { fundedVault, key, paidPayment, post, USDC, waitForReturn } from './support';
import { approvedApproval, operatorReturnDeps } from './approvals';

describe('Refunds and incident recovery', () => {
  endsWithBooksChecked();
  let m: Merchant;
  before(async () => {
    m = await newMerchant();
  });

  test('an excess incident is returned to the payer: exactly its amount on chain, the incident confirmed, posted, counted once', async () => {
    const { payment, payer } = await paidPayment(m, 10, 3);
    const incidents = await call(`/v2/payments/${payment.id}/incidents`, { credential: m.cred });
    assert.equal(incidents.status, 200, incidents.text);
    assert.equal(incidents.body.items.length, 1);
    const incident = incidents.body.items[0];
    assert.equal(incident.kind, 'excess');
    assert.equal(incident.fromAddress, payer.address.toLowerCase());
    const before = await tokenBalance(payer.address);

    // 20 at once: exactly one is accepted, the others are told a recovery is under way.
    const tries = await Promise.all(
      Array.from({ length: 20 }, () => post(m, `/v2/payments/${payment.id}/incident-recoveries`, { incidentId: incident.id })),
    );
    const accepted = tries.filter((r) => r.status === 201);
    assert.equal(accepted.length, 1, tries.map((r) => r.text).join('\n'));
    for (const r of tries.filter((x) => x.status !== 201)) {
      assert.equal(r.status, 409, r.text);
      assert.match(r.body.error.details.reasonCode, /^(recovery_in_progress|incident_already_recovered)$/);
    }
    const recovery = accepted[0]!.body.incidentRecovery;
    assert.equal(recovery.destinationAddress, payer.address.toLowerCase());
    assert.equal(recovery.amount.amountAtomic, String(USDC(3)));

    await waitForReturn(m, payment.id, 'incident-recoveries', recovery.id, 'confirmed');
    assert.equal(await tokenBalance(payer.address), before + USDC(3));
    const after = await waitForPayment(m, payment.id, 'recovery counted', (x) => x.incidentRecoverySummary.confirmedCount === 1);
    assert.deepEqual(after.incidentRecoverySummary, {
      count: 1,
      pendingCount: 0,
      confirmedCount: 1,
      failedCount: 0,
      requiresInterventionCount: 0,
      requestedAmountAtomic: String(USDC(3)),
      confirmedAmountAtomic: String(USDC(3)),
    });
    assert.equal(await tokenBalance(payment.funding.depositAddress.address), 0n);
    const again = await post(m, `/v2/payments/${payment.id}/incident-recoveries`, { incidentId: incident.id });
    assert.equal(again.status, 409, again.text);
    assert.equal(again.body.error.details.reasonCode, 'incident_already_recovered');
    const txns = await call(`/v2/accounts/${m.accountId}/transactions?paymentId=${payment.id}`, { credential: m.cred });
    assert.ok(
      txns.body.transactions.some(
        (t: { financialLegKind: string; direction: string }) => t.financialLegKind === 'incident_recovery' && t.direction === 'sent',
      ),
    );
    await assertLedgerBalanced();
  });

  test("a burst queued on an incident's lock past the pool's acquire timeout is answered 503 service_unavailable with Retry-After, and one recovery is made in all", async (t) => {
    const h = await getHarness();
    const { payment } = await paidPayment(m, 2, 1);
    const [incident] = (await call(`/v2/payments/${payment.id}/incidents`, { credential: m.cred })).body.items;
    // The service's own API on a pool of two connections that waits 300 ms for one (the harness's: 10, 10 s).
    const tiny = createDatabase({ url: h.databaseUrl, poolMax: 2, acquireTimeoutMs: 300 });
    const api = await listenApi(await apiDepsOnHarness({ db: tiny, engine: h.engine, returns: h.engine, chains: h.chain.chains }));
    const path = `/v2/payments/${payment.id}/incident-recoveries`;
    const keys = Array.from({ length: 5 }, () => key('burst'));
    const send = (k: string) =>
      call(path, { baseUrl: api.baseUrl, credential: m.cred, headers: { 'idempotency-key': k }, body: { incidentId: incident.id } });
    // The incident's row lock, taken first: the burst's transactions queue on it, each holding a connection.
    const lock = await h.db.pool.connect();
    const answered = new Map<string, ApiResponse>();
    let refused: string[] = [];
    let refusedAt = 0;
    let burst: Promise<ApiResponse[]> | undefined;
    try {
      await lock.query('BEGIN');
      await lock.query('SELECT id FROM payment_incidents WHERE id = $1 FOR UPDATE', [incident.id]);
      burst = Promise.all(keys.map((k) => send(k).then((r) => (answered.set(k, r), r))));
      burst.catch(() => undefined); // awaited below
      // Two wait on the lock with both connections; the other three get none in time.
      await until((saw) => (saw([...answered.values()].map((r) => r.status)), answered.size >= 3), 'three of the burst answered');
      assert.equal(answered.size, 3);
      for (const r of answered.values()) {
        assert.equal(r.status, 503, r.text);
        assert.equal(r.body.error.code, 'service_unavailable', r.text);
        assert.equal(r.headers.get('retry-after'), '1');
      }
      refused = [...answered.keys()];
      refusedAt = Date.now();
    } finally {
      await lock.query('ROLLBACK');
      lock.release();
    }
    try {
      const all = await burst!;
      // The lock free, the two waiting ones run one after the other: one recovery, one told it is under way.
      const served = all.filter((r) => r.status !== 503);
      assert.deepEqual(served.map((r) => r.status).sort(), [201, 409], served.map((r) => r.text).join('\n'));
      const recovery = served.find((r) => r.status === 201)!.body.incidentRecovery;
      // What the 503 invites: the same key again after Retry-After. The request runs again (and is
      // refused: a recovery is under way), as its key was released though the main pool had run out.
      await t.test('retried with its key after Retry-After, a refused request runs again', async () => {
        const retryAfterMs = refusedAt + 1000 - Date.now();
        if (retryAfterMs > 0) await new Promise((r) => setTimeout(r, retryAfterMs)); // what Retry-After asks of a client
        for (const k of refused) {
          const again = await post(m, path, { incidentId: incident.id }, { baseUrl: api.baseUrl, key: k });
          // It ran: refused by the rules (the recovery under way, or done by now), not request_in_progress.
          assert.equal(again.status, 409, again.text);
          assert.ok(['recovery_in_progress', 'incident_already_recovered'].includes(again.body.error.details?.reasonCode), again.text);
        }
      });
      assert.equal(await h.db.prisma.fundReturn.count({ where: { incidentId: incident.id } }), 1);
      await waitForReturn(m, payment.id, 'incident-recoveries', recovery.id, 'confirmed');
    } finally {
      await api.close();
      await tiny.close();
    }
  });

  test("the burst's client gives up at its deadline, naming the refusals it retried", async () => {
    // An API at capacity for good: every answer the capacity refusal.
    const full = http.createServer((_req, res) => {
      res.writeHead(503, {
        'content-type': 'application/json',
        'retry-after': '1',
        'svc-version': '2026-11-01',
        'x-request-id': 'req_full',
      });
      res.end(
        JSON.stringify({
          error: { code: 'service_unavailable', message: 'The service is at capacity; retry after the Retry-After interval' },
        }),
      );
    });
    await new Promise<void>((resolve) => full.listen(0, '127.0.0.1', resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(full.address() as AddressInfo).port}`;
      await assert.rejects(
        post(m, '/v2/payments/payment_x/refunds', {}, { baseUrl, deadlineMs: 1500 }),
        /still refused after \d+ tries: 503 Retry-After 1/,
      );
    } finally {
      await new Promise<void>((resolve) => full.close(() => resolve()));
    }
  });

  test("operators return an underpaid Payment's funds (CLI, to the payer) and its late funds (to a given address, under a second operator's approval); a service address is refused", async () => {
    const h = await getHarness();
    const p = (await createPayment(m, { amount: '10', expiresInSeconds: 60 })).body.payment;
    const escrow = p.funding.depositAddress.address as string;
    const payer = await newPayer(USDC(6));
    await payTo(payer, escrow, USDC(4));
    await waitForPayment(m, p.id, '4 USDC confirmed', (x) => x.status === 'processing' && x.stage === 'awaiting_funds');
    assert.equal((await awaitWorkflowResult<{ status: string }>(h, p.id)).status, 'expired');
    await payTo(payer, escrow, USDC(2));
    await waitForPayment(m, p.id, 'late funds held', (x) => x.incidentRecoverySummary.count === 2);
    const incidents = (await call(`/v2/payments/${p.id}/incidents`, { credential: m.cred })).body.items;
    const underpaid = incidents.find((i: { kind: string }) => i.kind === 'underpaid_expired');
    const late = incidents.find((i: { kind: string }) => i.kind === 'late');
    assert.ok(underpaid && late, JSON.stringify(incidents));
    const before = await tokenBalance(payer.address);

    const admin = await startAdminApi({ allowPrivate: false, withEngine: true });
    try {
      const route = `/admin/v1/payments/${p.id}/incident-recoveries`;
      const ours = await admin.call('POST', route, {
        incidentId: late.id,
        destinationAddress: escrow,
        reason: 'payer asked',
      });
      assert.equal(ours.status, 400, JSON.stringify(ours.body));
      assert.equal(ours.body.error.details.fields[0].field, 'body.destinationAddress');
      assert.equal(await h.db.prisma.fundReturn.count({ where: { paymentId: p.id } }), 0);
      // A recovery recorded to an address that is now the service's: the sender refuses it, so it
      // fails with nothing sent, the incident shows failed, and a new request may follow.
      const refused = await h.db.prisma.fundReturn.create({
        data: {
          id: `recovery_refused${Date.now()}`,
          kind: 'incident_recovery',
          appId: m.cred.appId,
          paymentId: p.id,
          incidentId: late.id,
          status: 'pending',
          statusVersion: 1,
          chainId: h.chainId,
          tokenAddress: p.paymentAmount.tokenAddress.toLowerCase(),
          fromAddress: escrow.toLowerCase(),
          toAddress: escrow.toLowerCase(),
          amountAtomic: String(USDC(2)),
          requestedBy: 'operator',
          actor: 'test',
        },
      });
      await h.engine.startFundReturn(refused.id, 2);
      assert.deepEqual(await awaitWorkflowResult(h, `fund-return:${refused.id}`), { status: 'failed' });
      assert.equal(
        (await h.db.prisma.fundReturn.findUniqueOrThrow({ where: { id: refused.id } })).failureReason,
        'settlement_destination_not_allowed',
      );
      assert.equal(
        (await waitForPayment(m, p.id, 'a failed recovery', (x) => x.incidentRecoverySummary.failedCount === 1)).incidentRecoverySummary
          .pendingCount,
        1,
      );
      const target = (await newPayer(0n)).address;
      // Another address than the payer's goes only under an approval a second operator gave.
      const approval = await approvedApproval({
        paymentId: p.id,
        incidentId: late.id,
        destinationAddress: target,
        requestedBy: 'ops@example.com',
        decidedBy: 'ops:alice',
      });
      // The CLI (its own process) and an operator's recovery in this one at once: one escrow, two recoveries, each paid once.
      const [printed, toTarget] = await Promise.all([
        cli(['payments', 'recover', p.id, '--incident', underpaid.id, '--reason', 'expired underpaid', '--actor', 'ops:alice'], {
          DATA_DIR: h.custodyDataDir,
        }),
        recoverIncident(operatorReturnDeps(h), { actor: 'ops@example.com', channel: 'admin_api' }, p.id, {
          incidentId: late.id,
          destinationAddress: target,
          reason: 'payer asked',
          approvalId: approval.id,
        }),
      ]);
      assert.equal(printed.object, 'incident_recovery');
      assert.equal(printed.destinationAddress, payer.address.toLowerCase());
      await waitForReturn(m, p.id, 'incident-recoveries', printed.id, 'confirmed');
      await waitForReturn(m, p.id, 'incident-recoveries', toTarget.id, 'confirmed');
      assert.equal(await tokenBalance(payer.address), before + USDC(4));
      assert.equal(await tokenBalance(target), USDC(2));
      assert.equal(await tokenBalance(escrow), 0n);
      const rows = await h.db.prisma.fundReturn.findMany({
        where: { paymentId: p.id, status: 'confirmed' },
        orderBy: { amountAtomic: 'asc' },
      });
      assert.deepEqual(
        rows.map((r) => [r.requestedBy, r.actor, r.reason]),
        [
          ['operator', 'ops@example.com', 'payer asked'],
          ['operator', 'ops:alice', 'expired underpaid'],
        ],
      );
      const summary = (await waitForPayment(m, p.id, 'both recovered', (x) => x.incidentRecoverySummary.confirmedCount === 2))
        .incidentRecoverySummary;
      assert.equal(summary.confirmedAmountAtomic, String(USDC(6)));
    } finally {
      await admin.close();
    }
  });

  test("refunds from the recipient's vault: partial then the rest, with events and summary; beyond the amount is refused", async () => {
    const vault = await fundedVault(m, 12);
    const { payment, payer } = await paidPayment(m, 5);
    const before = await tokenBalance(payer.address);
    const firstKey = { 'idempotency-key': key('refund') };
    const first = await call(`/v2/payments/${payment.id}/refunds`, {
      credential: m.cred,
      headers: firstKey,
      body: { amount: '2', reason: 'one item returned' },
    });
    assert.equal(first.status, 201, first.text);
    const replay = await call(`/v2/payments/${payment.id}/refunds`, {
      credential: m.cred,
      headers: firstKey,
      body: { amount: '2', reason: 'one item returned' },
    });
    assert.equal(replay.body.refund.id, first.body.refund.id, 'the same key answers the same refund');
    const keyless = await call(`/v2/payments/${payment.id}/refunds`, { credential: m.cred, body: { amount: '1' } });
    assert.equal(keyless.status, 400, keyless.text);
    assert.equal(first.body.refund.destinationAddress, payer.address.toLowerCase());
    const over = await post(m, `/v2/payments/${payment.id}/refunds`, { amount: '3.000001' });
    assert.equal(over.status, 409, over.text);
    assert.equal(over.body.error.details.reasonCode, 'refund_exceeds_payment');
    await waitForReturn(m, payment.id, 'refunds', first.body.refund.id, 'confirmed');
    const partial = await waitForPayment(m, payment.id, 'partially refunded', (x) => x.refundSummary.status === 'partially_refunded');
    assert.deepEqual(partial.refundSummary, {
      status: 'partially_refunded',
      count: 1,
      requestedAmountAtomic: String(USDC(2)),
      confirmedAmountAtomic: String(USDC(2)),
    });
    assert.equal(partial.status, 'succeeded');

    const rest = await post(m, `/v2/payments/${payment.id}/refunds`, {});
    assert.equal(rest.status, 201, rest.text);
    assert.equal(rest.body.refund.amount.amountAtomic, String(USDC(3)));
    await waitForReturn(m, payment.id, 'refunds', rest.body.refund.id, 'confirmed');
    const full = await waitForPayment(m, payment.id, 'refunded', (x) => x.refundSummary.status === 'refunded');
    assert.deepEqual(full.refundSummary, {
      status: 'refunded',
      count: 2,
      requestedAmountAtomic: String(USDC(5)),
      confirmedAmountAtomic: String(USDC(5)),
    });
    assert.equal(await tokenBalance(payer.address), before + USDC(5));
    assert.equal(await tokenBalance(vault.address), USDC(7));
    const names = (await eventNames(payment.id)).filter((n) => /refund/.test(n));
    assert.deepEqual(names, ['payment.refund_pending', 'payment.partially_refunded', 'payment.refund_pending', 'payment.refunded']);
    const none = await post(m, `/v2/payments/${payment.id}/refunds`, { amount: '0.000001' });
    assert.equal(none.status, 409, none.text);
    await assertLedgerBalanced();
  });

  test('20 concurrent refunds asking for twice the Payment: exactly its amount is accepted and paid', async () => {
    const { payment, payer } = await paidPayment(m, 4);
    const before = await tokenBalance(payer.address);
    // The vault holds 7 (left by the previous test): enough for 4, not for the 8 asked.
    const tries = await Promise.all(Array.from({ length: 20 }, () => post(m, `/v2/payments/${payment.id}/refunds`, { amount: '0.4' })));
    const accepted = tries.filter((r) => r.status === 201);
    assert.equal(accepted.length, 10, tries.map((r) => `${r.status} ${r.text}`).join('\n'));
    for (const r of tries.filter((x) => x.status !== 201)) assert.equal(r.body.error.details.reasonCode, 'refund_exceeds_payment', r.text);
    for (const r of accepted) await waitForReturn(m, payment.id, 'refunds', r.body.refund.id, 'confirmed');
    const done = await waitForPayment(m, payment.id, 'refunded', (x) => x.refundSummary.status === 'refunded');
    assert.equal(done.refundSummary.confirmedAmountAtomic, String(USDC(4)));
    assert.equal(await tokenBalance(payer.address), before + USDC(4));
  });
});
