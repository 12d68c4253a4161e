import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call } from '../support/api-client';
import { eventually, newPayer, tokenBalance } from '../support/chain';
import { getHarness } from '../support/harness';
import { endsWithBooksChecked } from '../support/books';
import { awaitWorkflowResult } from '../support/workflow-result';
import { newMerchant, type Merchant } from '../support/fixtures';
import { newId } from '../../src/domain/values/ids';
import { resolveAlerts } from '../../src/domain/monitoring/alerts';
import { RETURN_DESTINATION_REFUSED } from '../../src/domain/returns/return-destination';
import { recoverIncident } from '../../src/domain/operators/operator-actions';
import { approvedApproval, operatorReturnDeps } from './approvals';
import { fundedVault, paidPayment, post, USDC, waitForReturn } from './support';

const SILENT = { error: () => undefined, info: () => undefined };

async function heldReturn(id: string) {
  const h = await getHarness();
  return eventually(async (saw) => {
    const r = await h.db.prisma.fundReturn.findUniqueOrThrow({ where: { id } });
    saw({ id, status: r.status, failureReason: r.failureReason });
    return r.status === 'requires_intervention' ? r : undefined;
  }, `${id} held`);
}

/** What the signer did about a refused return: nothing signed, an open critical alert naming it. */
async function assertRefusedBySigner(id: string, reason: string, allowedAtomic?: bigint) {
  const h = await getHarness();
  const row = await heldReturn(id);
  assert.equal(row.failureReason, reason);
  assert.equal(row.transactionHash, null);
  assert.equal(await h.db.prisma.settlementLeg.count({ where: { sourceId: id } }), 0, 'nothing was signed');
  const alerts = await h.db.prisma.operatorAlert.findMany({ where: { kind: RETURN_DESTINATION_REFUSED, subject: `fund_return:${id}` } });
  assert.equal(alerts.length, 1);
  assert.equal(alerts[0]!.severity, 'critical');
  assert.equal(alerts[0]!.resolvedAt, null);
  assert.deepEqual(
    [(alerts[0]!.details as Record<string, unknown>).reason, (alerts[0]!.details as Record<string, unknown>).destinationAddress],
    [reason, row.toAddress],
  );
  if (allowedAtomic !== undefined) assert.equal((alerts[0]!.details as Record<string, unknown>).allowedAtomic, String(allowedAtomic));
}

/** An operator fails the held return (the incident is free again) and closes the alert, as after looking into it. */
async function failHeld(id: string, confirmations: number) {
  const h = await getHarness();
  await h.engine.resolveFundReturn(id, confirmations, { action: 'fail', actor: 'ops:carol', reason: 'not ours to pay' });
  assert.deepEqual(await awaitWorkflowResult(h, `fund-return:${id}`), { status: 'failed' });
  await resolveAlerts({ prisma: h.db.prisma, logger: SILENT }, RETURN_DESTINATION_REFUSED, [`fund_return:${id}`]);
}

describe('The signer checks where a fund return goes', () => {
  endsWithBooksChecked();
  let m: Merchant;
  before(async () => {
    m = await newMerchant();
  });

  test('a fund return row inserted straight into the database is refused by the signer: nothing sent, held with the reason, a critical alert', async () => {
    const h = await getHarness();
    const { payment, escrow } = await paidPayment(m, 2, 1);
    const [incident] = (await call(`/v2/payments/${payment.id}/incidents`, { credential: m.cred })).body.items;
    const attacker = (await newPayer(0n)).address;
    const escrowBefore = await tokenBalance(escrow);
    assert.equal(escrowBefore, USDC(1), 'the escrow holds the incident');
    const row = await h.db.prisma.fundReturn.create({
      data: {
        id: newId('incidentRecovery'),
        kind: 'incident_recovery',
        appId: m.cred.appId,
        paymentId: payment.id,
        incidentId: incident.id,
        status: 'pending',
        statusVersion: 1,
        chainId: h.chainId,
        tokenAddress: payment.paymentAmount.tokenAddress.toLowerCase(),
        fromAddress: escrow.toLowerCase(),
        toAddress: attacker.toLowerCase(),
        amountAtomic: String(USDC(1)),
        requestedBy: 'operator',
        actor: 'ops:mallory',
      },
    });
    const confirmations = h.chain.chains.network(h.chainId).confirmations;
    assert.equal(await h.engine.startFundReturn(row.id, confirmations), 'started');

    await assertRefusedBySigner(row.id, 'destination_not_approved');
    assert.equal(await tokenBalance(attacker), 0n, "the attacker's balance is unchanged");
    assert.equal(await tokenBalance(escrow), escrowBefore);
    const held = await h.db.prisma.paymentIncident.findUniqueOrThrow({ where: { id: incident.id } });
    assert.equal(held.status, 'requires_intervention');

    // An operator's retry is checked again: still refused, still nothing sent, the one alert still open.
    await h.engine.resolveFundReturn(row.id, confirmations, { action: 'retry', actor: 'ops:carol', reason: 'try again' });
    await eventually(async () => (await h.db.prisma.fundReturn.findUniqueOrThrow({ where: { id: row.id } })).statusVersion >= 4, 'retried');
    await assertRefusedBySigner(row.id, 'destination_not_approved');
    assert.equal(await tokenBalance(attacker), 0n);
    await failHeld(row.id, confirmations);
    assert.equal(await tokenBalance(escrow), escrowBefore);
  });

  test("a refund row inserted to a real payer for more than the books leave it is refused by the signer; the payer's own refunds still pay", async () => {
    const h = await getHarness();
    const vault = await fundedVault(m, 10);
    const { payment, payer } = await paidPayment(m, 2);
    const confirmations = h.chain.chains.network(h.chainId).confirmations;
    const insert = (amountAtomic: bigint) =>
      h.db.prisma.fundReturn.create({
        data: {
          id: newId('refund'),
          kind: 'refund',
          appId: m.cred.appId,
          paymentId: payment.id,
          vaultId: vault.id,
          status: 'pending',
          statusVersion: 1,
          chainId: h.chainId,
          tokenAddress: payment.paymentAmount.tokenAddress.toLowerCase(),
          fromAddress: vault.address.toLowerCase(),
          toAddress: payer.address.toLowerCase(),
          amountAtomic: String(amountAtomic),
          requestedBy: 'partner',
          actor: m.cred.appId,
        },
      });
    const balances = async () => [await tokenBalance(payer.address), await tokenBalance(vault.address)];
    const before = await balances();

    // The payer paid 2: 3 is more than it paid, though the vault holds it.
    const over = await insert(USDC(3));
    assert.equal(await h.engine.startFundReturn(over.id, confirmations), 'started');
    await assertRefusedBySigner(over.id, 'amount_exceeds_books', USDC(2));
    assert.deepEqual(await balances(), before, 'nothing left the vault');
    await failHeld(over.id, confirmations);

    // A partial refund through the API pays; then 1.5 is more than is left (1), with the first refund counted.
    const part = await post(m, `/v2/payments/${payment.id}/refunds`, { amount: '1' });
    assert.equal(part.status, 201, part.text);
    await waitForReturn(m, payment.id, 'refunds', part.body.refund.id, 'confirmed');
    const afterPart = await balances();
    assert.deepEqual(afterPart, [before[0]! + USDC(1), before[1]! - USDC(1)]);
    const beyondRest = await insert(1_500_000n);
    assert.equal(await h.engine.startFundReturn(beyondRest.id, confirmations), 'started');
    await assertRefusedBySigner(beyondRest.id, 'amount_exceeds_books', USDC(1));
    assert.deepEqual(await balances(), afterPart);
    await failHeld(beyondRest.id, confirmations);

    // The rest, exactly what is left: its own row does not count against it.
    const rest = await post(m, `/v2/payments/${payment.id}/refunds`, {});
    assert.equal(rest.status, 201, rest.text);
    assert.equal(rest.body.refund.amount.amountAtomic, String(USDC(1)));
    await waitForReturn(m, payment.id, 'refunds', rest.body.refund.id, 'confirmed');
    assert.deepEqual(await balances(), [before[0]! + USDC(2), before[1]! - USDC(2)]);
  });

  test('an approval requested and approved by the same operator does not let a recovery go to another address', async () => {
    const h = await getHarness();
    const { payment, escrow } = await paidPayment(m, 2, 1);
    const [incident] = (await call(`/v2/payments/${payment.id}/incidents`, { credential: m.cred })).body.items;
    const target = (await newPayer(0n)).address;
    const approval = await approvedApproval({
      paymentId: payment.id,
      incidentId: incident.id,
      destinationAddress: target,
      requestedBy: 'ops:alice',
      decidedBy: 'ops:alice',
    });
    const created = await recoverIncident(operatorReturnDeps(h), { actor: 'ops:alice', channel: 'admin_api' }, payment.id, {
      incidentId: incident.id,
      destinationAddress: target,
      reason: 'payer lost the key',
      approvalId: approval.id,
    });
    await assertRefusedBySigner(created.id, 'approval_same_operator');
    assert.equal(await tokenBalance(target), 0n);
    assert.equal(await tokenBalance(escrow), USDC(1));
    await failHeld(created.id, h.chain.chains.network(h.chainId).confirmations);
  });
});
