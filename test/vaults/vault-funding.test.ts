import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { getHarness } from '../support/harness';
import { eventually, mine, newPayer, payTo, pokeScanner, sendOnHeldChain, setNativeBalance, tokenBalance } from '../support/chain';
import { assertMinedExactlyWhenLive, replacedUnderRisingBaseFee } from '../support/rising-base-fee';
import { createPayment, newMerchant, waitForPayment } from '../support/fixtures';
import { awaitWorkflowResult } from '../support/workflow-result';
import { endsWithBooksChecked } from '../support/books';
import { authorizeVaultFunding, vaultOptionFor } from '../../src/domain/vaults/vault-funding';
import { decideFunding } from '../../src/domain/vaults/pure/vault-policy-rules';
import { periodStartOf, SPEND_PERIOD_MS } from '../../src/domain/vaults/vault-config';
import { createVaultActivities } from '../../activities/vaults';
import { ApiError } from '../../src/domain/requests/errors';
import { call } from '../support/api-client';
import { VAULT_FUNDING_WORKFLOW, vaultFundingWorkflowId, type VaultFundingWorkflowInput } from '../../workflows/contracts/vault-funding';
import { activeVault } from './support';
import { startAdminApi } from '../webhooks/support/admin';

const USDC = (n: number) => BigInt(n) * 1_000_000n;
const actor = { type: 'client' as const, id: null };

async function deps() {
  const h = await getHarness();
  return { prisma: h.db.prisma, chains: h.chain.chains };
}

async function vaultActivities() {
  const h = await getHarness();
  const settlement = { prisma: h.db.prisma, chains: h.chain.chains, custody: h.chain.custody };
  return createVaultActivities({ prisma: h.db.prisma, chains: h.chain.chains, settlement });
}

/** A vault with an active policy (limit), holding `funded` USDC on chain, and a merchant of the same app. */
async function fundedVault(limitAtomic: bigint, funded: bigint) {
  const v = await activeVault(limitAtomic.toString());
  if (funded > 0n) await payTo(await newPayer(funded), v.vault.address, funded);
  const merchant = await newMerchant(v.cred);
  return { ...v, merchant };
}

/** Every Payment these tests created: what they authorized and never sent is failed after them (below). */
const created: string[] = [];

async function payments(
  merchant: Awaited<ReturnType<typeof newMerchant>>,
  count: number,
  amount: string,
  expiresInSeconds?: number,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const res = await createPayment(merchant, { amount, ...(expiresInSeconds ? { expiresInSeconds } : {}) });
    assert.equal(res.status, 201, res.text);
    ids.push(res.body.payment.id);
  }
  created.push(...ids);
  return ids;
}

/**
 * Authorized here without a workflow, an operation would be taken up by a later reconciliation pass
 * (vault-funding-recovery.ts) and pay its Payment in another test's time: fail them as a workflow would.
 */
after(async () => {
  const h = await getHarness();
  const activities = await vaultActivities();
  for (const op of await h.db.prisma.vaultFundingOperation.findMany({ where: { paymentId: { in: created }, status: 'authorized' } })) {
    await activities.failVaultFunding({ fundingOperationId: op.id, reason: 'test_not_sent' });
  }
});

const reasonOf = (err: unknown) => (err instanceof ApiError ? (err.details as { reasonCode: string }).reasonCode : String(err));

describe('Vault funding: the spend-limit rule', () => {
  test('property: authorizations in one period never exceed the limit, and one is refused exactly when it would', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.array(fc.bigInt({ min: 1n, max: 10n ** 11n }), { maxLength: 40 }),
        (limit, amounts) => {
          let spent = 0n;
          for (const amount of amounts) {
            const d = decideFunding({
              policyActive: true,
              tokenAllowed: true,
              limitAtomic: limit,
              spentInPeriodAtomic: spent,
              availableAtomic: 10n ** 18n,
              amountAtomic: amount,
            });
            assert.equal(d.ok, spent + amount <= limit);
            if (!d.ok) assert.equal(d.reason, 'vault_spend_limit_exceeded');
            if (d.ok) spent += amount;
            assert.ok(spent <= limit);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  test('property: the available balance, an inactive policy and a token not allowed each refuse', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.bigInt({ min: 0n, max: 10n ** 12n }),
        fc.boolean(),
        fc.boolean(),
        (amount, available, active, allowed) => {
          const d = decideFunding({
            policyActive: active,
            tokenAllowed: allowed,
            limitAtomic: 10n ** 15n,
            spentInPeriodAtomic: 0n,
            availableAtomic: available,
            amountAtomic: amount,
          });
          assert.equal(d.ok, active && allowed && available >= amount);
          if (!active) assert.deepEqual(d, { ok: false, reason: 'vault_policy_inactive' });
          else if (!allowed) assert.deepEqual(d, { ok: false, reason: 'vault_token_not_allowed' });
        },
      ),
      { numRuns: 300 },
    );
  });

  test('property: fixed 30-day periods counted from the anchor contain their instant and start on the 30-day grid', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('2026-01-01'), max: new Date('2027-01-01'), noInvalidDate: true }),
        fc.integer({ min: 0, max: 400 * 86_400_000 }),
        (anchor, offset) => {
          const at = new Date(anchor.getTime() + offset);
          const start = periodStartOf(anchor, at);
          assert.ok(start.getTime() <= at.getTime() && at.getTime() < start.getTime() + SPEND_PERIOD_MS);
          assert.equal((start.getTime() - anchor.getTime()) % SPEND_PERIOD_MS, 0);
        },
      ),
    );
  });
});

describe('Vault funding: authorization against the database', () => {
  test('20 concurrent authorizations against one vault never exceed the spend limit of the period', async () => {
    const h = await getHarness();
    // Limit 50 USDC, 1000 USDC in the vault, twenty 5 USDC Payments: exactly ten fit.
    const { vault, accountId, merchant } = await fundedVault(USDC(50), USDC(1000));
    const ids = await payments(merchant, 20, '5');
    const d = await deps();
    const results = await Promise.allSettled(
      ids.map((paymentId) => authorizeVaultFunding(d, { paymentId, payerAccountId: accountId, actor })),
    );
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    assert.equal(ok.length, 10);
    assert.deepEqual([...new Set(refused.map((r) => reasonOf(r.reason)))], ['vault_spend_limit_exceeded']);
    const rows = await h.db.prisma.vaultFundingOperation.findMany({ where: { vaultId: vault.id } });
    assert.equal(rows.length, 10);
    assert.equal(
      rows.reduce((s, r) => s + BigInt(r.amountAtomic.toFixed()), 0n),
      USDC(50),
    );
    assert.equal(new Set(rows.map((r) => r.periodStart.getTime())).size, 1);
    for (const r of ok) {
      const op = (r as PromiseFulfilledResult<Awaited<ReturnType<typeof authorizeVaultFunding>>>).value.fundingOperation;
      assert.match(op.id, /^pay_funding_/);
      assert.equal(op.status, 'authorized');
      assert.equal(op.statusVersion, 1);
      assert.equal(op.commercialFeeMode, 'parent_payment');
      assert.equal(op.transactionHash, null);
      assert.equal(op.broadcastAt, null);
    }
    const audits = await h.db.prisma.vaultAuditEvent.count({ where: { vaultId: vault.id, eventType: 'vault.funding.authorized' } });
    assert.equal(audits, 10);
  });

  test('the available balance is the on-chain balance less reserved funding; a repeat for one Payment answers the same operation', async () => {
    const { accountId, merchant } = await fundedVault(USDC(1000), USDC(12));
    const [a, b, c] = await payments(merchant, 3, '5');
    const d = await deps();
    const option = await vaultOptionFor(d, { paymentId: a!, payerAccountId: accountId });
    assert.ok(option);
    assert.equal(option.amountAtomic, '5000000');
    assert.equal(option.availableAtomic, '12000000');
    assert.equal(option.remainingInPeriodAtomic, '1000000000');
    const first = await authorizeVaultFunding(d, { paymentId: a!, payerAccountId: accountId, actor });
    assert.equal(first.created, true);
    const again = await authorizeVaultFunding(d, { paymentId: a!, payerAccountId: accountId, actor });
    assert.equal(again.created, false);
    assert.equal(again.fundingOperation.id, first.fundingOperation.id);
    assert.equal((await vaultOptionFor(d, { paymentId: b!, payerAccountId: accountId }))?.availableAtomic, '7000000');
    await authorizeVaultFunding(d, { paymentId: b!, payerAccountId: accountId, actor });
    assert.equal(await vaultOptionFor(d, { paymentId: c!, payerAccountId: accountId }), null);
    await assert.rejects(
      authorizeVaultFunding(d, { paymentId: c!, payerAccountId: accountId, actor }),
      (err) => reasonOf(err) === 'vault_insufficient_balance',
    );
  });

  test('one vault payment per Payment: of two vaults authorizing one Payment at once exactly one wins, the other is 409 payment_not_open, and the database holds one live operation', async () => {
    const h = await getHarness();
    const a = await fundedVault(USDC(100), USDC(20));
    const b = await activeVault(USDC(100).toString(), a.cred);
    await payTo(await newPayer(USDC(20)), b.vault.address, USDC(20));
    const [paymentId] = await payments(a.merchant, 1, '5');
    const d = await deps();
    const results = await Promise.allSettled(
      [a, b].map((v) => authorizeVaultFunding(d, { paymentId: paymentId!, payerAccountId: v.accountId, actor })),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    assert.equal(won.length, 1, results.map((r) => (r.status === 'rejected' ? String(r.reason) : 'ok')).join(', '));
    assert.equal(lost.length, 1);
    const err = lost[0]!.reason as ApiError;
    assert.ok(err instanceof ApiError, String(err));
    assert.equal(err.code, 'payment_not_open');
    assert.equal(err.status, 409);
    assert.deepEqual(err.details, { reasonCode: 'vault_funding_exists' });
    const rows = await h.db.prisma.vaultFundingOperation.findMany({ where: { paymentId: paymentId! } });
    assert.equal(rows.length, 1);
    // The winner's repeat answers its operation; the loser's repeat is refused the same way.
    const winner = rows[0]!.vaultId === a.vault.id ? a : b;
    const loser = winner === a ? b : a;
    const again = await authorizeVaultFunding(d, { paymentId: paymentId!, payerAccountId: winner.accountId, actor });
    assert.deepEqual([again.created, again.fundingOperation.id], [false, rows[0]!.id]);
    await assert.rejects(
      authorizeVaultFunding(d, { paymentId: paymentId!, payerAccountId: loser.accountId, actor }),
      (e) => e instanceof ApiError && e.code === 'payment_not_open',
    );
    // Whatever the path, the database holds one live funding per Payment.
    await assert.rejects(
      h.db.prisma.vaultFundingOperation.create({
        data: { ...rows[0]!, id: `pay_funding_copy_${Date.now()}`, vaultId: loser.vault.id, accountId: loser.accountId },
      }),
      (e) => (e as { code?: string }).code === 'P2002',
    );
    assert.equal(await h.db.prisma.vaultAuditEvent.count({ where: { vaultId: loser.vault.id, eventType: 'vault.funding.authorized' } }), 0);
  });

  test('no option and a refusal without an active policy, for a token the policy does not allow, or for a Payment that is not open', async () => {
    const h = await getHarness();
    const { accountId, merchant, vault } = await fundedVault(USDC(100), USDC(20));
    const [p] = await payments(merchant, 1, '5');
    const d = await deps();
    await h.db.prisma.vaultPolicy.update({
      where: { id: vault.policy.id },
      data: { allowedTokens: [{ symbol: 'X', chainId: 31337, tokenAddress: '0x0000000000000000000000000000000000000001', decimals: 6 }] },
    });
    assert.equal(await vaultOptionFor(d, { paymentId: p!, payerAccountId: accountId }), null);
    await assert.rejects(
      authorizeVaultFunding(d, { paymentId: p!, payerAccountId: accountId, actor }),
      (err) => reasonOf(err) === 'vault_token_not_allowed',
    );
    await h.db.prisma.vaultPolicy.update({ where: { id: vault.policy.id }, data: { status: 'superseded' } });
    await assert.rejects(
      authorizeVaultFunding(d, { paymentId: p!, payerAccountId: accountId, actor }),
      (err) => reasonOf(err) === 'vault_policy_inactive',
    );
    const cancelled = await call(`/v2/payments/${p}/cancel`, { credential: merchant.cred, body: { reasonCode: 'other' } });
    assert.equal(cancelled.status, 200, cancelled.text);
    await assert.rejects(
      authorizeVaultFunding(d, { paymentId: p!, payerAccountId: accountId, actor }),
      (err) => reasonOf(err) === 'payment_not_fundable',
    );
  });
});

/**
 * A vault funding whose leg outlived its workflow: sent while the Payment was open, then no block takes
 * it while the workflow's few checks run out and it gives up, and while the Payment expires. Then the
 * chain mines it: a late payment. The vault has its gas already, so the send needs no top-up and the
 * held chain mines no block at all: a block mined for a top-up (or for any other transaction pending
 * then) would take the leg with it.
 */
async function lateVaultLeg() {
  const h = await getHarness();
  const v = await fundedVault(USDC(100), USDC(10));
  // The shortest expiry: waiting for it skips time, and each skipped minute walks every live workflow
  // of the shard through its timers (late in a shard, ten minutes of them outlasted the wait).
  const [paymentId] = await payments(v.merchant, 1, '2', 60);
  const escrow = (await h.db.prisma.payment.findUniqueOrThrow({ where: { id: paymentId! } })).escrowAddress!;
  await setNativeBalance(v.vault.address, 10n ** 18n);
  const { fundingOperation } = await authorizeVaultFunding(await deps(), { paymentId: paymentId!, payerAccountId: v.accountId, actor });
  const workflowId = vaultFundingWorkflowId(fundingOperation.id);
  const input: VaultFundingWorkflowInput = { fundingOperationId: fundingOperation.id, confirmations: 2, pollSeconds: 1, maxChecks: 3 };
  const held = await sendOnHeldChain(
    async () => {
      await h.env.client.workflow.start(VAULT_FUNDING_WORKFLOW, { taskQueue: h.taskQueue, workflowId, args: [input] });
      return awaitWorkflowResult(h, workflowId);
    },
    () => false,
    'the funding workflow gave up, its leg unmined',
  );
  try {
    assert.deepEqual(held.result, { status: 'requires_intervention' });
    const gaveUp = await h.db.prisma.vaultFundingOperation.findUniqueOrThrow({ where: { id: fundingOperation.id } });
    assert.equal(gaveUp.failureReason, 'transfer_unconfirmed');
    assert.notEqual(gaveUp.status, 'confirmed');
    // Still unmined when the Payment's expiry comes (its workflow's timer, jumped): the money will be late.
    assert.equal((await awaitWorkflowResult<{ status: string }>(h, paymentId!)).status, 'expired');
  } finally {
    await held.release();
  }
  await eventually(async () => (await tokenBalance(escrow)) === 2_000_000n, 'the late leg mined');
  return { ...v, paymentId: paymentId!, escrow, fundingOperationId: fundingOperation.id };
}

/**
 * The late incident the expired Payment records for the vault's transfer. Each round runs a
 * reconciliation pass, as the schedule would: awaiting it is also what lets the time-skipping server
 * jump the Payment workflow's timers.
 */
async function lateIncidentOf(late: { merchant: Awaited<ReturnType<typeof newMerchant>>; paymentId: string; vault: { address: string } }) {
  const h = await getHarness();
  return eventually(async (saw) => {
    await pokeScanner();
    await h.engine.runPaymentReconciliation({ graceSeconds: 3600 });
    const res = await call(`/v2/payments/${late.paymentId}/incidents`, { credential: late.merchant.cred });
    assert.equal(res.status, 200, res.text);
    const transfers = await h.db.prisma.paymentTransfer.findMany({
      where: { paymentId: late.paymentId },
      select: { status: true, role: true, fromAddress: true },
    });
    const payment = await h.db.prisma.payment.findUniqueOrThrow({ where: { id: late.paymentId }, select: { status: true } });
    saw({ incidents: res.body.items, payment: payment.status, transfers });
    const incident = res.body.items[0];
    return incident?.fromAddress === late.vault.address.toLowerCase() ? (incident as { id: string; kind: string }) : undefined;
  }, 'the late vault payment recorded as an incident');
}

describe('Vault funding: the on-chain leg', () => {
  endsWithBooksChecked();

  test('moves the exact amount from the vault to the escrow once, the Payment advances by its own verification, and vault.funding_posted follows confirmation', async () => {
    const h = await getHarness();
    const { vault, accountId, merchant } = await fundedVault(USDC(100), USDC(30));
    const [paymentId] = await payments(merchant, 1, '7.25');
    const payment = await h.db.prisma.payment.findUniqueOrThrow({ where: { id: paymentId! } });
    const { fundingOperation } = await authorizeVaultFunding(await deps(), { paymentId: paymentId!, payerAccountId: accountId, actor });
    const vaultBefore = await tokenBalance(vault.address);
    const escrowBefore = await tokenBalance(payment.escrowAddress!);
    const activities = await vaultActivities();
    const sent = await activities.sendVaultFunding({ fundingOperationId: fundingOperation.id });
    assert.equal(sent.status, 'broadcast');
    assert.match(sent.transactionHash!, /^0x[0-9a-f]{64}$/);
    assert.ok(sent.broadcastAt);
    // A retry (a worker crash after the broadcast) sends nothing twice.
    const retried = await activities.sendVaultFunding({ fundingOperationId: fundingOperation.id });
    assert.equal(retried.transactionHash, sent.transactionHash);
    const legs = await h.db.prisma.settlementLeg.findMany({ where: { sourceType: 'vault_funding', sourceId: fundingOperation.id } });
    assert.equal(legs.length, 1);
    await eventually(async () => (await tokenBalance(payment.escrowAddress!)) - escrowBefore === 7_250_000n, 'funds at escrow');
    assert.equal(vaultBefore - (await tokenBalance(vault.address)), 7_250_000n);
    await pokeScanner();
    // The Payment sees the vault's transfer like any payer's, and settles by its own rules.
    await waitForPayment(merchant, paymentId!, 'succeeded', (p) => p.status === 'succeeded');
    await mine(3);
    const confirmed = await eventually(async () => {
      const op = await activities.checkVaultFunding({ fundingOperationId: fundingOperation.id, confirmations: 2 });
      return op.status === 'confirmed' ? op : undefined;
    }, 'funding confirmed');
    assert.ok(confirmed.confirmedAt);
    assert.equal(confirmed.statusVersion, 3);
    const events = await h.db.prisma.event.findMany({ where: { resourceId: vault.id }, orderBy: [{ createdAt: 'asc' }] });
    assert.deepEqual(
      events.map((e) => e.name),
      ['vault.policy_active', 'vault.funding_posted'],
    );
    assert.deepEqual(events[1]!.payload, { accountId, vaultId: vault.id, fundingOperationId: fundingOperation.id, paymentId });
    const option = await vaultOptionFor(await deps(), { paymentId: (await payments(merchant, 1, '1'))[0]!, payerAccountId: accountId });
    assert.equal(option?.availableAtomic, (USDC(30) - 7_250_000n).toString());
    assert.equal(option?.remainingInPeriodAtomic, (USDC(100) - 7_250_000n).toString());
  });

  test('the vault funding workflow sends the leg, the Payment succeeds by its own verification, and the operation is confirmed with vault.funding_posted', async () => {
    const h = await getHarness();
    const { vault, accountId, merchant } = await fundedVault(USDC(100), USDC(20));
    const [paymentId] = await payments(merchant, 1, '3.5');
    const payment = await h.db.prisma.payment.findUniqueOrThrow({ where: { id: paymentId! } });
    const { fundingOperation } = await authorizeVaultFunding(await deps(), { paymentId: paymentId!, payerAccountId: accountId, actor });
    assert.equal(await h.engine.startVaultFunding(fundingOperation.id, 2), 'started');
    assert.equal(await h.engine.startVaultFunding(fundingOperation.id, 2), 'exists');
    await eventually(async () => (await tokenBalance(payment.escrowAddress!)) >= 3_500_000n, 'funds at escrow');
    await pokeScanner();
    await waitForPayment(merchant, paymentId!, 'succeeded', (p) => p.status === 'succeeded');
    const op = await eventually(async () => {
      const row = await h.db.prisma.vaultFundingOperation.findUniqueOrThrow({ where: { id: fundingOperation.id } });
      return row.status === 'confirmed' ? row : undefined;
    }, 'funding confirmed by the workflow');
    assert.ok(op.transactionHash);
    assert.equal(await h.db.prisma.event.count({ where: { resourceId: vault.id, name: 'vault.funding_posted' } }), 1);
    assert.equal(await tokenBalance(vault.address), USDC(20) - 3_500_000n);
  });

  test("a funding leg stuck under a rising base fee is replaced at its nonce by the workflow's check; the escrow is funded once and the operation confirmed", async () => {
    const h = await getHarness();
    const { vault, accountId, merchant } = await fundedVault(USDC(100), USDC(20));
    await setNativeBalance(vault.address, 10n ** 17n);
    const [paymentId] = await payments(merchant, 1, '4');
    const source = await replacedUnderRisingBaseFee(1, async () => {
      const { fundingOperation } = await authorizeVaultFunding(await deps(), { paymentId: paymentId!, payerAccountId: accountId, actor });
      assert.equal(await h.engine.startVaultFunding(fundingOperation.id, 2), 'started');
      return { type: 'vault_funding', id: fundingOperation.id };
    });
    await pokeScanner();
    await waitForPayment(merchant, paymentId!, 'succeeded', (p) => p.status === 'succeeded');
    await eventually(async (saw) => {
      const row = await h.db.prisma.vaultFundingOperation.findUniqueOrThrow({ where: { id: source.id } });
      saw(row.status);
      return row.status === 'confirmed' ? row : undefined;
    }, 'funding confirmed by the workflow');
    assert.equal((await assertMinedExactlyWhenLive(source)).length, 1);
    assert.equal(await tokenBalance(vault.address), USDC(20) - USDC(4), 'the vault paid once');
    assert.equal(await h.db.prisma.event.count({ where: { resourceId: vault.id, name: 'vault.funding_posted' } }), 1);
  });

  test('the vault funding workflow turns a refused transfer into vault.funding_requires_intervention and a failed operation', async () => {
    const h = await getHarness();
    const { vault, accountId, merchant } = await fundedVault(USDC(100), USDC(10));
    const [paymentId] = await payments(merchant, 1, '2');
    const { fundingOperation } = await authorizeVaultFunding(await deps(), { paymentId: paymentId!, payerAccountId: accountId, actor });
    await h.db.prisma.vaultFundingOperation.update({
      where: { id: fundingOperation.id },
      data: { toAddress: merchant.wallet.toLowerCase() },
    });
    await h.engine.startVaultFunding(fundingOperation.id, 2);
    const result = await awaitWorkflowResult(h, `vault-funding:${fundingOperation.id}`);
    assert.deepEqual(result, { status: 'failed' });
    const row = await h.db.prisma.vaultFundingOperation.findUniqueOrThrow({ where: { id: fundingOperation.id } });
    assert.equal(row.status, 'failed');
    assert.equal(row.failureReason, 'settlement_destination_not_allowed');
    assert.equal(await h.db.prisma.event.count({ where: { resourceId: vault.id, name: 'vault.funding_requires_intervention' } }), 1);
    assert.equal(await tokenBalance(vault.address), USDC(10));
  });

  test('the vault funding workflow checks the Payment again before it sends: one expired since the authorize is never paid, the operation fails and its reserve is freed', async () => {
    const h = await getHarness();
    const { vault, accountId, merchant } = await fundedVault(USDC(100), USDC(10));
    const [paymentId] = await payments(merchant, 1, '3', 60);
    const { fundingOperation } = await authorizeVaultFunding(await deps(), { paymentId: paymentId!, payerAccountId: accountId, actor });
    // Time passes between the authorize and the send: the Payment's workflow expires it.
    assert.equal((await awaitWorkflowResult<{ status: string }>(h, paymentId!)).status, 'expired');
    await h.engine.startVaultFunding(fundingOperation.id, 2);
    assert.deepEqual(await awaitWorkflowResult(h, `vault-funding:${fundingOperation.id}`), { status: 'failed' });
    const row = await h.db.prisma.vaultFundingOperation.findUniqueOrThrow({ where: { id: fundingOperation.id } });
    assert.equal(row.status, 'failed');
    assert.equal(row.failureReason, 'payment_not_open');
    assert.equal(
      await h.db.prisma.settlementLeg.count({ where: { sourceType: 'vault_funding', sourceId: fundingOperation.id } }),
      0,
      'nothing was signed',
    );
    assert.equal(await tokenBalance(vault.address), USDC(10));
    const event = await h.db.prisma.event.findFirstOrThrow({
      where: { resourceId: vault.id, name: 'vault.funding_requires_intervention' },
    });
    assert.equal((event.payload as Record<string, unknown>).reasonCode, 'payment_not_open');
    const [next] = await payments(merchant, 1, '1');
    assert.equal(
      (await vaultOptionFor(await deps(), { paymentId: next!, payerAccountId: accountId }))?.availableAtomic,
      USDC(10).toString(),
      'the reserve is freed',
    );
  });

  test('a leg confirmed after its workflow gave up is found by the reconciliation pass and posted once, and the vault never pays that Payment again', async () => {
    const h = await getHarness();
    const late = await lateVaultLeg();
    const { vault, accountId, merchant, paymentId, fundingOperationId } = late;
    const op = await eventually(async () => {
      await h.engine.runPaymentReconciliation({ graceSeconds: 3600 });
      const row = await h.db.prisma.vaultFundingOperation.findUniqueOrThrow({ where: { id: fundingOperationId } });
      return row.status === 'confirmed' ? row : undefined;
    }, 'the late leg posted by the reconciliation pass');
    assert.ok(op.transactionHash && op.confirmedAt);
    const again = await h.engine.runPaymentReconciliation({ graceSeconds: 3600 });
    assert.equal(again.vaultReceipts?.funding?.posted, 0, 'posted once');
    assert.equal(await h.db.prisma.event.count({ where: { resourceId: vault.id, name: 'vault.funding_posted' } }), 1);
    assert.equal(
      await h.db.prisma.ledgerPosting.count({ where: { sourceType: 'vault', sourceId: vault.id, leg: `funding:${fundingOperationId}` } }),
      1,
    );
    // Never paid again: a repeat answers the one operation, and nothing more leaves the vault.
    const repeat = await authorizeVaultFunding(await deps(), { paymentId, payerAccountId: accountId, actor });
    assert.deepEqual(
      [repeat.created, repeat.fundingOperation.id, repeat.fundingOperation.status],
      [false, fundingOperationId, 'confirmed'],
    );
    assert.equal(await h.db.prisma.settlementLeg.count({ where: { sourceType: 'vault_funding', sourceId: fundingOperationId } }), 1);
    assert.equal(await tokenBalance(vault.address), USDC(10) - 2_000_000n);
    assert.equal(
      (await vaultOptionFor(await deps(), { paymentId: (await payments(merchant, 1, '1'))[0]!, payerAccountId: accountId }))
        ?.availableAtomic,
      (USDC(10) - 2_000_000n).toString(),
    );
    // The Payment expired meanwhile: the vault's money is its late incident (returned to the vault in the next test's way).
    await lateIncidentOf(late);
  });

  test('a late vault payment is returned to the vault it came from by default; another vault is still refused as a destination, even by an operator', async () => {
    const h = await getHarness();
    const late = await lateVaultLeg();
    const incident = await lateIncidentOf(late);
    const path = `/v2/payments/${late.paymentId}/incident-recoveries`;
    const other = await activeVault(USDC(1).toString(), late.cred);
    const refused = await call(path, {
      credential: late.merchant.cred,
      headers: { 'idempotency-key': `late-other-${incident.id}` },
      body: { incidentId: incident.id, destinationAddress: other.vault.address },
    });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.body.error.details.reasonCode, 'destination_not_payer', refused.text);
    assert.equal(refused.body.error.details.fields[0].field, 'body.destinationAddress');
    // An operator may name another address, but the vault exception is that vault's own leg only.
    const admin = await startAdminApi({ allowPrivate: false, withEngine: true });
    try {
      const byOperator = await admin.call('POST', `/admin/v1/payments/${late.paymentId}/incident-recoveries`, {
        incidentId: incident.id,
        destinationAddress: other.vault.address,
        reason: 'wrong vault',
      });
      assert.equal(byOperator.status, 400, JSON.stringify(byOperator.body));
      assert.equal(byOperator.body.error.details.reasonCode, 'service_controlled', JSON.stringify(byOperator.body));
    } finally {
      await admin.close();
    }
    const res = await call(path, {
      credential: late.merchant.cred,
      headers: { 'idempotency-key': `late-${incident.id}` },
      body: { incidentId: incident.id },
    });
    assert.equal(res.status, 201, res.text);
    const recovery = res.body.incidentRecovery;
    assert.equal(recovery.destinationAddress, late.vault.address.toLowerCase());
    assert.equal(recovery.amount.amountAtomic, '2000000');
    await eventually(async () => {
      const row = await h.db.prisma.fundReturn.findUniqueOrThrow({ where: { id: recovery.id } });
      return row.status === 'confirmed' ? row : undefined;
    }, 'the recovery confirmed');
    assert.equal(await tokenBalance(late.vault.address), USDC(10), 'the vault has its money back');
    assert.equal(await tokenBalance(late.escrow), 0n);
    // The vault's book takes the money back in as any receipt (posted at depth by the pass).
    await eventually(async () => {
      await h.engine.runPaymentReconciliation({ graceSeconds: 3600 });
      return (
        (await h.db.prisma.vaultReceipt.count({
          where: { vaultId: late.vault.id, status: 'posted', fromAddress: late.escrow.toLowerCase() },
        })) === 1
      );
    }, 'the returned money posted to the vault');
  });

  test('a transfer the sender refuses fails the operation, frees its amount and emits vault.funding_requires_intervention', async () => {
    const h = await getHarness();
    const { vault, accountId, merchant } = await fundedVault(USDC(100), USDC(10));
    const [paymentId] = await payments(merchant, 1, '4');
    const { fundingOperation } = await authorizeVaultFunding(await deps(), { paymentId: paymentId!, payerAccountId: accountId, actor });
    // Not an escrow: the sender must refuse to pay anything but a Payment's escrow from a vault.
    await h.db.prisma.vaultFundingOperation.update({
      where: { id: fundingOperation.id },
      data: { toAddress: merchant.wallet.toLowerCase() },
    });
    const activities = await vaultActivities();
    await assert.rejects(activities.sendVaultFunding({ fundingOperationId: fundingOperation.id }), /not a Payment escrow/);
    const failed = await activities.failVaultFunding({
      fundingOperationId: fundingOperation.id,
      reason: 'settlement_destination_not_allowed',
    });
    assert.equal(failed.status, 'failed');
    assert.equal(await tokenBalance(vault.address), USDC(10));
    const event = await h.db.prisma.event.findFirstOrThrow({
      where: { resourceId: vault.id, name: 'vault.funding_requires_intervention' },
    });
    assert.equal((event.payload as Record<string, unknown>).reasonCode, 'settlement_destination_not_allowed');
    const option = await vaultOptionFor(await deps(), { paymentId: paymentId!, payerAccountId: accountId });
    assert.equal(option?.availableAtomic, USDC(10).toString());
  });
});
