import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call } from '../support/api-client';
import { eventually, newPayer, payTo, tokenBalance } from '../support/chain';
import { getHarness } from '../support/harness';
import { assertBooksMatchChain, booksBaseline, endsWithBooksChecked } from '../support/books';
import { awaitWorkflowResult } from '../support/workflow-result';
import { assertLedgerBalanced, createPayment, newMerchant, waitForPayment, type Merchant } from '../support/fixtures';
import { startAdminApi } from '../webhooks/support/admin';
import { fundedVault, post, USDC, waitForReturn } from './support';

type Incident = { id: string; kind: string; status: string; fromAddress: string | null; amount: { amountAtomic: string } };

async function incidentsOf(m: Merchant, paymentId: string): Promise<Incident[]> {
  const res = await call(`/v2/payments/${paymentId}/incidents`, { credential: m.cred });
  assert.equal(res.status, 200, res.text);
  return res.body.items as Incident[];
}

describe('Returns go to each payer for what that payer paid', () => {
  endsWithBooksChecked();
  let m: Merchant;
  before(async () => {
    m = await newMerchant();
  });

  test('an underpaid Payment paid by two wallets expires with one incident per payer, and each recovery pays its own payer back what it paid', async () => {
    const h = await getHarness();
    const baseline = await booksBaseline();
    const p = (await createPayment(m, { amount: '10', expiresInSeconds: 60 })).body.payment;
    const escrow = p.funding.depositAddress.address as string;
    const [a, b] = [await newPayer(USDC(5)), await newPayer(USDC(5))];
    // a pays twice (1 + 2), b once (4): 7 of 10, then the Payment expires.
    await payTo(a, escrow, USDC(1));
    await payTo(b, escrow, USDC(4));
    await payTo(a, escrow, USDC(2));
    await eventually(async (saw) => {
      const row = await h.db.prisma.payment.findUniqueOrThrow({ where: { id: p.id } });
      saw({ status: row.status, received: row.receivedAtomic.toFixed(), pending: row.pendingAtomic.toFixed() });
      return row.receivedAtomic.toFixed() === String(USDC(7)) && row.pendingAtomic.toFixed() === '0';
    }, '7 USDC confirmed');
    assert.equal((await awaitWorkflowResult<{ status: string }>(h, p.id)).status, 'expired');
    const expired = await waitForPayment(m, p.id, 'funds held for recovery', (x) => x.incidentRecoverySummary.count > 0);

    const incidents = await incidentsOf(m, p.id);
    const byPayer = new Map(incidents.map((i) => [i.fromAddress, i]));
    assert.deepEqual(
      incidents.map((i) => [i.kind, i.fromAddress, i.amount.amountAtomic]).sort(),
      [
        ['underpaid_expired', a.address.toLowerCase(), String(USDC(3))],
        ['underpaid_expired', b.address.toLowerCase(), String(USDC(4))],
      ].sort(),
      JSON.stringify(incidents),
    );
    assert.equal(expired.incidentRecoverySummary.requestedAmountAtomic, String(USDC(7)));

    // A partner may not send one payer's share to the other.
    const crossed = await post(m, `/v2/payments/${p.id}/incident-recoveries`, {
      incidentId: byPayer.get(b.address.toLowerCase())!.id,
      destinationAddress: a.address,
    });
    assert.equal(crossed.status, 400, crossed.text);
    assert.equal(crossed.body.error.details.reasonCode, 'destination_not_payer');

    const [beforeA, beforeB] = [await tokenBalance(a.address), await tokenBalance(b.address)];
    const recoveries = [];
    for (const incident of incidents) {
      const res = await post(m, `/v2/payments/${p.id}/incident-recoveries`, { incidentId: incident.id });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.incidentRecovery.destinationAddress, incident.fromAddress);
      assert.equal(res.body.incidentRecovery.amount.amountAtomic, incident.amount.amountAtomic);
      recoveries.push(res.body.incidentRecovery);
    }
    for (const r of recoveries) await waitForReturn(m, p.id, 'incident-recoveries', r.id, 'confirmed');
    assert.equal(await tokenBalance(a.address), beforeA + USDC(3));
    assert.equal(await tokenBalance(b.address), beforeB + USDC(4));
    assert.equal(await tokenBalance(escrow), 0n);
    const done = await waitForPayment(m, p.id, 'both recovered', (x) => x.incidentRecoverySummary.confirmedCount === 2);
    assert.deepEqual(done.incidentRecoverySummary, {
      count: 2,
      pendingCount: 0,
      confirmedCount: 2,
      failedCount: 0,
      requiresInterventionCount: 0,
      requestedAmountAtomic: String(USDC(7)),
      confirmedAmountAtomic: String(USDC(7)),
    });
    const postings = await h.db.prisma.ledgerPosting.findMany({
      where: { sourceType: 'payment', sourceId: p.id, leg: { startsWith: 'recovery:' } },
    });
    assert.equal(postings.length, 2);
    await assertLedgerBalanced();
    await assertBooksMatchChain({ baseline });
  });

  test('a refund of a Payment paid by two wallets goes to the payer named, never beyond what that payer paid; with none named it is refused', async () => {
    const h = await getHarness();
    const baseline = await booksBaseline();
    await fundedVault(m, 20);
    const p = (await createPayment(m, { amount: '5' })).body.payment;
    const escrow = p.funding.depositAddress.address as string;
    const [a, b] = [await newPayer(USDC(5)), await newPayer(USDC(5))];
    await payTo(a, escrow, USDC(3));
    await payTo(b, escrow, USDC(2));
    await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
    const [beforeA, beforeB] = [await tokenBalance(a.address), await tokenBalance(b.address)];

    const unnamed = await post(m, `/v2/payments/${p.id}/refunds`, { amount: '1' });
    assert.equal(unnamed.status, 400, unnamed.text);
    assert.equal(unnamed.body.error.details.reasonCode, 'destination_required');
    assert.deepEqual(
      unnamed.body.error.details.fields.map((f: { field: string }) => f.field),
      ['body.destinationAddress'],
    );
    const overB = await post(m, `/v2/payments/${p.id}/refunds`, { amount: '2.000001', destinationAddress: b.address });
    assert.equal(overB.status, 409, overB.text);
    assert.equal(overB.body.error.details.reasonCode, 'refund_exceeds_payer');

    const partA = await post(m, `/v2/payments/${p.id}/refunds`, { amount: '1', destinationAddress: a.address });
    assert.equal(partA.status, 201, partA.text);
    const restA = await post(m, `/v2/payments/${p.id}/refunds`, { destinationAddress: a.address });
    assert.equal(restA.status, 201, restA.text);
    assert.equal(restA.body.refund.amount.amountAtomic, String(USDC(2)), "a's rest: 3 paid, 1 refunded");
    const restB = await post(m, `/v2/payments/${p.id}/refunds`, { destinationAddress: b.address });
    assert.equal(restB.status, 201, restB.text);
    assert.equal(restB.body.refund.amount.amountAtomic, String(USDC(2)));
    const none = await post(m, `/v2/payments/${p.id}/refunds`, { amount: '0.000001', destinationAddress: a.address });
    assert.equal(none.status, 409, none.text);
    // An incident recorded whole before incidents were per payer (as an older service did): no payer
    // gets it all on a partner's word, and an operator must say where it goes.
    const legacy = await h.db.prisma.paymentIncident.create({
      data: { id: `incident_legacy${Date.now()}`, paymentId: p.id, kind: 'underpaid_expired', status: 'pending', amountAtomic: '1' },
    });
    try {
      const whole = await post(m, `/v2/payments/${p.id}/incident-recoveries`, { incidentId: legacy.id, destinationAddress: a.address });
      assert.equal(whole.status, 409, whole.text);
      assert.equal(whole.body.error.details.reasonCode, 'incident_several_payers');
      const admin = await startAdminApi({ allowPrivate: false, withEngine: true });
      try {
        const unnamedByOperator = await admin.call('POST', `/admin/v1/payments/${p.id}/incident-recoveries`, {
          incidentId: legacy.id,
          reason: 'test',
        });
        assert.equal(unnamedByOperator.status, 400, JSON.stringify(unnamedByOperator.body));
        assert.equal(unnamedByOperator.body.error.details.reasonCode, 'destination_required');
      } finally {
        await admin.close();
      }
      assert.equal(await h.db.prisma.fundReturn.count({ where: { incidentId: legacy.id } }), 0);
    } finally {
      await h.db.prisma.paymentIncident.delete({ where: { id: legacy.id } });
    }

    for (const r of [partA, restA, restB]) await waitForReturn(m, p.id, 'refunds', r.body.refund.id, 'confirmed');
    assert.equal(await tokenBalance(a.address), beforeA + USDC(3));
    assert.equal(await tokenBalance(b.address), beforeB + USDC(2));
    const done = await waitForPayment(m, p.id, 'refunded', (x) => x.refundSummary.status === 'refunded');
    assert.equal(done.refundSummary.confirmedAmountAtomic, String(USDC(5)));
    await assertLedgerBalanced();
    await assertBooksMatchChain({ baseline });
  });
});
