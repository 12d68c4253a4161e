import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Address } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { sweepDust } from '../../src/domain/payments/dust';
import { call } from '../support/api-client';
import { eventually, mine, newPayer, pokeScanner, rpc, tokenBalance, withMiningPaused } from '../support/chain';
import { untilAtRest } from '../support/engine-clock';
import { getHarness } from '../support/harness';
import { assertLedgerBalanced, createPayment, getPayment, newMerchant, waitForPayment } from '../support/fixtures';
import { endsWithBooksChecked } from '../support/books';

const USDC = 1_000_000n;

/** Several transfers in one block, as chains do: mining paused, all sent, one block mined. */
async function inOneBlock(payer: PrivateKeyAccount, to: string, amounts: bigint[]): Promise<void> {
  const h = await getHarness();
  const chain = h.chain.chains.get(h.chainId);
  await withMiningPaused(async () => {
    for (const amountAtomic of amounts)
      await chain.sendTokenTransfer({ from: payer, token: SANDBOX_TOKEN_ADDRESS, to: to as Address, amountAtomic });
    await rpc('evm_mine');
  });
}

async function historyLength(workflowId: string): Promise<number> {
  const h = await getHarness();
  return (await h.probes.workflowHistory(workflowId)).events?.length ?? 0;
}

describe('Bounded work per Payment', () => {
  endsWithBooksChecked();

  test("dust sent to an escrow never wakes the Payment's workflow; the dust sweep holds it for recovery once confirmed", async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = (await createPayment(m, { amount: '10' })).body.payment;
    const escrow = p.funding.depositAddress.address as string;
    const before = await untilAtRest(h.env, p.id);
    const payer = await newPayer(25n * (USDC / 2n));
    await inOneBlock(
      payer,
      escrow,
      Array.from({ length: 25 }, () => USDC / 2n),
    );
    await mine(2);
    await pokeScanner();
    await eventually(
      async () => (await h.db.prisma.paymentTransfer.count({ where: { paymentId: p.id, status: 'dust' } })) >= 25,
      'the 25 dust transfers recorded',
      { mine: false },
    );
    assert.equal(await h.db.prisma.paymentTransfer.count({ where: { paymentId: p.id, status: 'dust' } }), 25);
    assert.equal(await historyLength(p.id), before, 'no signal, no step: the workflow never saw the dust');

    // The scheduled pass of the Payment reconciler follows dust (a batch of the oldest per pass).
    const pass = await h.engine.runPaymentReconciliation({ graceSeconds: 3600 });
    let held = pass.dust?.held ?? 0;
    for (let i = 0; i < 10 && (await h.db.prisma.paymentTransfer.count({ where: { paymentId: p.id, status: 'dust' } })) > 0; i += 1) {
      held += (await sweepDust({ prisma: h.db.prisma, chains: h.chain.chains })).held;
    }
    assert.ok(held >= 25, JSON.stringify(pass));
    const { payment } = await getPayment(m, p.id);
    assert.equal(payment.status, 'requires_payment_method');
    assert.equal(payment.incidentRecoverySummary.count, 25);
    assert.equal(payment.incidentRecoverySummary.requestedAmountAtomic, String(25n * (USDC / 2n)));
    const balances = await call(`/v2/accounts/${m.accountId}/balances`, { credential: m.cred });
    assert.deepEqual(
      balances.body.balances.map((b: Record<string, string>) => b.pendingAtomic),
      [String(25n * (USDC / 2n))],
    );
    assert.equal(await tokenBalance(escrow), 25n * (USDC / 2n));
    // A second sweep finds nothing left to do.
    assert.equal((await sweepDust({ prisma: h.db.prisma, chains: h.chain.chains })).held, 0);
    await assertLedgerBalanced();
  });

  test('a Payment that sees many transfers continues as new, carrying its state, and counts each once', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    // A run of 60 events instead of 500: twenty transfers cross it as seventy cross the real bound.
    h.policies.payment = { maxRunEvents: 60 };
    let p;
    try {
      p = (await createPayment(m, { amount: '100' })).body.payment;
    } finally {
      delete h.policies.payment;
    }
    const escrow = p.funding.depositAddress.address as string;
    const firstRun = (await h.engine.describeWorkflow(p.id)).runId;
    const payer = await newPayer(100n * USDC);
    await inOneBlock(
      payer,
      escrow,
      Array.from({ length: 20 }, () => USDC),
    );
    await mine(2);
    await pokeScanner();
    await waitForPayment(m, p.id, '20 USDC confirmed', (x) => x.status === 'processing' && x.stage === 'awaiting_funds');
    await inOneBlock(payer, escrow, [80n * USDC]);
    await mine(2);
    await pokeScanner();
    const done = await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
    assert.equal(done.incidentRecoverySummary.count, 0);
    assert.equal(await h.db.prisma.paymentTransfer.count({ where: { paymentId: p.id, status: 'confirmed', role: 'funding' } }), 21);
    assert.notEqual((await h.engine.describeWorkflow(p.id)).runId, firstRun, 'the lifecycle went on in a new run');
    assert.equal(await tokenBalance(escrow), 0n);
    await assertLedgerBalanced();
  });
});
