import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ZCreatePaymentResponse, ZPaymentResponse } from '../../src/domain/payments/payment.schemas';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { call } from '../support/api-client';
import { eventually, mine, newPayer, payTo, tokenBalance } from '../support/chain';
import { getHarness } from '../support/harness';
import { Worker } from '@temporalio/worker';
import { assertLedgerBalanced, createPayment, eventNames, getPayment, newMerchant, waitForPayment } from '../support/fixtures';
import { endsWithBooksChecked } from '../support/books';

describe('Payment creation', () => {
  endsWithBooksChecked();

  test('creates a receive Payment with escrow deposit instructions, fees and a checkout', async () => {
    const m = await newMerchant();
    const res = await createPayment(m, {
      amount: '12.5',
      externalReference: 'order-1',
      description: 'Two coffees',
      metadata: { order: 1 },
      returnUrl: 'https://shop.example/return',
    });
    assert.equal(res.status, 201, res.text);
    ZCreatePaymentResponse.parse(res.body);
    const { payment, checkout, nextAction } = res.body;
    assert.match(payment.id, /^payment_[A-Za-z0-9_-]+$/);
    assert.equal(payment.apiVersion, '2026-09-09');
    assert.equal(payment.status, 'requires_payment_method');
    assert.equal(payment.statusVersion, 1);
    assert.equal(payment.operationalState, 'normal');
    assert.deepEqual(payment.paymentAmount, {
      amount: '12.5',
      amountAtomic: '12500000',
      assetType: 'crypto',
      assetCode: 'USDC',
      decimals: 6,
      chainId: 31337,
      tokenAddress: SANDBOX_TOKEN_ADDRESS,
    });
    // 1% platform + 0.5% partner, deducted at final settlement.
    assert.equal(payment.fees.platformFeeAmountAtomic, '125000');
    assert.equal(payment.fees.partnerFeeAmountAtomic, '62500');
    assert.equal(payment.fees.merchantNetAmountAtomic, '12312500');
    assert.equal(payment.funding.mode, 'escrow');
    assert.match(payment.funding.depositAddress.address, /^0x[0-9a-f]{40}$/);
    assert.equal(payment.funding.depositAddress.amountAtomic, '12500000');
    assert.deepEqual(payment.recipientDisplay, { displayName: 'Corner Shop', logoUrl: null });
    assert.equal(payment.settlement.destinationAddress, m.wallet);
    assert.deepEqual(payment.participants, [{ role: 'recipient', accountId: m.accountId }]);
    assert.equal(nextAction.type, 'transaction');
    assert.deepEqual(nextAction.depositInstructions, payment.funding.depositAddress);
    assert.match(checkout.paymentUrl, new RegExp(`/checkout/${payment.id}$`));
    assert.match(checkout.clientSecret, /_secret_/);
    assert.equal(checkout.returnUrl, 'https://shop.example/return');

    const page = await fetch(`${(await getHarness()).baseUrl}/checkout/${payment.id}`);
    const html = await page.text();
    assert.equal(page.status, 200);
    assert.ok(html.includes(payment.funding.depositAddress.address) && html.includes('12.5'));
    assert.ok(!html.includes(checkout.clientSecret));

    const read = await getPayment(m, payment.id);
    ZPaymentResponse.parse(read);
    assert.equal('checkout' in read, false);
  });

  test('the created Payment (written in plain SQL) reads back identical through the API, for generated bodies', async () => {
    const m = await newMerchant();
    const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 });
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          amount: fc
            .tuple(fc.integer({ min: 1, max: 10 ** 9 }), fc.integer({ min: 0, max: 999_999 }))
            .map(([i, f]) => `${i}.${String(f).padStart(6, '0')}`.replace(/\.?0+$/, '')),
          externalReference: fc.option(text, { nil: undefined }),
          description: fc.option(text, { nil: undefined }),
          metadata: fc.dictionary(
            fc.string({ minLength: 1, maxLength: 12 }),
            fc.oneof(text, fc.integer(), fc.boolean(), fc.constant(null)),
            { maxKeys: 5 },
          ),
        }),
        async (body) => {
          const created = await createPayment(m, body);
          assert.equal(created.status, 201, created.text);
          const read = await getPayment(m, created.body.payment.id);
          assert.deepEqual(read.payment, created.body.payment);
          assert.deepEqual(read.nextAction, created.body.nextAction);
        },
      ),
      { numRuns: 8 },
    );
  });

  test('an identical create retry returns the same Payment and clientSecret, and stores no secret', async () => {
    const m = await newMerchant();
    const h = await getHarness();
    const first = await createPayment(m, {}, 'same-key-1');
    const again = await createPayment(m, {}, 'same-key-1');
    assert.equal(first.status, 201);
    assert.equal(again.status, 201);
    assert.equal(again.text, first.text);
    assert.equal(await h.db.prisma.payment.count({ where: { appId: m.cred.appId } }), 1);
    const stored = await h.db.prisma.idempotencyRecord.findUniqueOrThrow({
      where: { appId_key: { appId: m.cred.appId, key: 'same-key-1' } },
    });
    assert.ok(!stored.responseBody!.includes(first.body.checkout.clientSecret));
    const conflict = await createPayment(m, { amount: '11' }, 'same-key-1');
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.error.code, 'idempotency_conflict');
  });

  test('requires an Idempotency-Key and refuses bad routes with the spec codes', async () => {
    const m = await newMerchant();
    const noKey = await call('/v2/payments', {
      credential: m.cred,
      body: { intent: 'receive', amount: '10', assetCode: 'USDC', chainId: 31337, destination: { type: 'upa', accountId: m.accountId } },
    });
    assert.equal(noKey.status, 400);
    const chain = await createPayment(m, { chainId: 1 });
    assert.equal(chain.status, 424);
    assert.equal(chain.body.error.code, 'chain_config_missing');
    const asset = await createPayment(m, { assetCode: 'DOGE' });
    assert.equal(asset.status, 422);
    assert.equal(asset.body.error.code, 'payment_method_not_supported');
    const small = await createPayment(m, { amount: '0.5' });
    assert.equal(small.status, 422);
    assert.equal(small.body.error.code, 'payment_amount_below_minimum');
    const expiry = await createPayment(m, { expiresInSeconds: 59 });
    assert.equal(expiry.status, 400);
    assert.equal(expiry.body.error.details.fields[0].field, 'body.expiresInSeconds');
    const h = await getHarness();
    assert.equal(await h.db.prisma.payment.count({ where: { appId: m.cred.appId } }), 0);
  });

  test('lists Payments by externalReference and status, paged with a cursor', async () => {
    const m = await newMerchant();
    for (let i = 0; i < 3; i += 1) assert.equal((await createPayment(m, { externalReference: 'batch-7' })).status, 201);
    assert.equal((await createPayment(m, { externalReference: 'other' })).status, 201);
    const first = await call('/v2/payments?externalReference=batch-7&limit=2', { credential: m.cred });
    assert.equal(first.status, 200);
    assert.equal(first.body.data.length, 2);
    assert.ok(first.body.nextCursor);
    const second = await call(`/v2/payments?externalReference=batch-7&limit=2&cursor=${first.body.nextCursor}`, { credential: m.cred });
    assert.equal(second.body.data.length, 1);
    assert.equal(second.body.nextCursor, null);
    const ids = new Set([...first.body.data, ...second.body.data].map((p: { id: string }) => p.id));
    assert.equal(ids.size, 3);
    const byStatus = await call('/v2/payments?status=succeeded', { credential: m.cred });
    assert.deepEqual(byStatus.body.data, []);
    const tampered = await call(`/v2/payments?externalReference=other&cursor=${first.body.nextCursor}`, { credential: m.cred });
    assert.equal(tampered.status, 400);
  });
});

describe('Payment lifecycle on chain', () => {
  endsWithBooksChecked();

  test('happy path: funds detected, confirmed, accepted, settled to the destination with fees, ledger balanced', async () => {
    const m = await newMerchant();
    const h = await getHarness();
    const created = await createPayment(m, { amount: '10' });
    const p = created.body.payment;
    const payer = await newPayer(10_000_000n);
    await payTo(payer, p.funding.depositAddress.address, 10_000_000n);
    const done = await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
    assert.equal(done.statusVersion, 4); // requires_payment_method -> processing -> accepted -> succeeded
    assert.ok(done.acceptedAt && done.succeededAt);
    assert.equal(done.stage, 'settlement_confirmed');
    assert.deepEqual(await eventNames(p.id), ['payment.created', 'payment.processing', 'payment.accepted', 'payment.succeeded']);
    assert.equal(await tokenBalance(m.wallet), 9_850_000n);
    assert.equal(await tokenBalance(p.funding.depositAddress.address), 0n);
    // Fee wallets accumulate over the whole run: what this Payment paid them is read from its own legs'
    // transactions on chain, not from their balances.
    const legs = await h.db.prisma.settlementLeg.findMany({ where: { sourceType: 'payment', sourceId: p.id, status: 'confirmed' } });
    const chain = h.chain.chains.get(h.chainId);
    const paid = (await Promise.all(legs.map((l) => chain.getTransactionTransfers(l.txHash as `0x${string}`)))).flat();
    const feeWallet = (index: number) => h.chain.custody.deriveAddress({ purpose: 'fee', index }).toLowerCase();
    assert.deepEqual(
      paid.map((t) => [t.from.toLowerCase(), t.to.toLowerCase(), t.amountAtomic]).sort(),
      [
        [p.funding.depositAddress.address.toLowerCase(), feeWallet(0), 100_000n],
        [p.funding.depositAddress.address.toLowerCase(), feeWallet(1), 50_000n],
        [p.funding.depositAddress.address.toLowerCase(), m.wallet.toLowerCase(), 9_850_000n],
      ].sort(),
    );
    const { nextAction } = await getPayment(m, p.id);
    assert.equal(nextAction, null);

    const txns = await call(`/v2/accounts/${m.accountId}/transactions?paymentId=${p.id}`, { credential: m.cred });
    assert.equal(txns.status, 200, txns.text);
    assert.equal(txns.body.transactions.length, 1);
    assert.equal(txns.body.transactions[0].status, 'posted');
    assert.equal(txns.body.transactions[0].financialLegKind, 'collection');
    const balances = await call(`/v2/accounts/${m.accountId}/balances`, { credential: m.cred });
    assert.equal(balances.body.balances[0].settledAtomic, '9850000');
    await assertLedgerBalanced();
  });

  test('an underpayment keeps waiting for the remainder, then a top-up completes it', async () => {
    const m = await newMerchant();
    const p = (await createPayment(m, { amount: '10' })).body.payment;
    const payer = await newPayer(10_000_000n);
    await payTo(payer, p.funding.depositAddress.address, 4_000_000n);
    await mine(3);
    const partial = await eventually(async () => {
      const r = await getPayment(m, p.id);
      return r.payment.status === 'processing' && r.nextAction?.depositInstructions.amountAtomic === '6000000' ? r : undefined;
    }, 'remaining 6 USDC');
    assert.equal(partial.nextAction.depositInstructions.amount, '6');
    await payTo(payer, p.funding.depositAddress.address, 6_000_000n);
    const done = await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
    assert.equal(done.incidentRecoverySummary.count, 0);
    assert.equal(await tokenBalance(m.wallet), 9_850_000n);
    await assertLedgerBalanced();
  });

  test('a second transfer after success is recorded as payment.duplicate_received for recovery', async () => {
    const m = await newMerchant();
    const p = (await createPayment(m, { amount: '5' })).body.payment;
    const payer = await newPayer(10_000_000n);
    await payTo(payer, p.funding.depositAddress.address, 5_000_000n);
    await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
    await payTo(payer, p.funding.depositAddress.address, 5_000_000n);
    const after = await waitForPayment(m, p.id, 'duplicate recorded', (x) => x.incidentRecoverySummary.count === 1);
    assert.equal(after.status, 'succeeded');
    assert.equal(after.incidentRecoverySummary.requestedAmountAtomic, '5000000');
    assert.ok((await eventNames(p.id)).includes('payment.duplicate_received'));
    await assertLedgerBalanced();
  });

  // A worker killed hard (SIGKILL) mid-lifecycle: the crash matrix's cells in npm test
  // (test/crash/crash-matrix.test.ts) kill a worker process at a settlement leg and before a transition.
});

describe('Durability', () => {
  endsWithBooksChecked();

  test('a rescan of blocks already scanned counts no transfer twice', async () => {
    const m = await newMerchant();
    const h = await getHarness();
    const p = (await createPayment(m, { amount: '2' })).body.payment;
    const payer = await newPayer(2_000_000n);
    await payTo(payer, p.funding.depositAddress.address, 2_000_000n);
    const before = await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
    // Rescan from just before this Payment's transfer: everything after it is read a second time.
    const seen = await h.db.prisma.paymentTransfer.findFirstOrThrow({ where: { paymentId: p.id } });
    await h.engine.rescanChain(h.chainId, seen.blockNumber - 1n);
    // A fresh payment after the rescan proves the restarted scanner has read past the old blocks.
    const marker = (await createPayment(m, { amount: '1' })).body.payment;
    await payTo(payer, marker.funding.depositAddress.address, 1_000_000n).catch(async () => {
      await payTo(await newPayer(1_000_000n), marker.funding.depositAddress.address, 1_000_000n);
    });
    await waitForPayment(m, marker.id, 'succeeded', (x) => x.status === 'succeeded');
    const after = await getPayment(m, p.id);
    assert.equal(after.payment.statusVersion, before.statusVersion);
    assert.equal(after.payment.incidentRecoverySummary.count, 0);
    assert.equal(await h.db.prisma.paymentTransfer.count({ where: { paymentId: p.id } }), 1);
    assert.deepEqual(await eventNames(p.id), ['payment.created', 'payment.processing', 'payment.accepted', 'payment.succeeded']);
    await assertLedgerBalanced();
  });

  test('a completed PaymentWorkflow history replays deterministically against the current code', async () => {
    const m = await newMerchant();
    const h = await getHarness();
    const p = (await createPayment(m, { amount: '2' })).body.payment;
    const payer = await newPayer(2_000_000n);
    await payTo(payer, p.funding.depositAddress.address, 2_000_000n);
    await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
    const history = await h.probes.workflowHistory(p.id);
    await Worker.runReplayHistory({ workflowBundle: h.workflowBundle }, history, p.id);
  });
});
