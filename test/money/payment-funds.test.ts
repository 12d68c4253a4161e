import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Address } from 'viem';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { createApi } from '../../src/http/app';
import { call } from '../support/api-client';
import { eventually, mine, newPayer, payTo, rpc, tokenBalance } from '../support/chain';
import { getHarness, apiDepsOnHarness } from '../support/harness';
import {
  assertLedgerBalanced,
  createPayment,
  eventNames,
  getPayment,
  newMerchant,
  waitForPayment,
  type Merchant,
} from '../support/fixtures';
import { endsWithBooksChecked } from '../support/books';
import { awaitWorkflowResult } from '../support/workflow-result';

const USDC = 1_000_000n;

/** The escrow book as the ledger has it, and what the chain holds at the escrow address. */
async function escrowBooksAndChain(paymentId: string, escrow: string) {
  const h = await getHarness();
  const rows = await h.db.prisma.$queryRaw<Array<{ sum: string | null }>>`
    SELECT sum(amount_atomic)::text AS sum FROM ledger_entries WHERE book = ${`escrow:${paymentId}`}`;
  return { books: BigInt(rows[0]?.sum ?? '0'), chain: await tokenBalance(escrow) };
}

async function balancesOf(m: Merchant) {
  const res = await call(`/v2/accounts/${m.accountId}/balances`, { credential: m.cred });
  assert.equal(res.status, 200, res.text);
  return res.body.balances.map((b: Record<string, string>) => [b.settledAtomic, b.pendingAtomic]);
}

async function recoveryHolds(m: Merchant, paymentId: string) {
  const res = await call(`/v2/accounts/${m.accountId}/transactions?paymentId=${paymentId}`, { credential: m.cred });
  assert.equal(res.status, 200, res.text);
  return res.body.transactions
    .filter((t: { financialLegKind: string }) => t.financialLegKind === 'recovery_hold')
    .map((t: { amount: { amount: string }; status: string }) => [t.amount.amount, t.status]);
}

describe('Every unit that reaches an escrow is accounted for', () => {
  endsWithBooksChecked();

  test('funds still confirming when the Payment is accepted become an excess incident once confirmed, posted and visible', async () => {
    const m = await newMerchant();
    const p = (await createPayment(m, { amount: '10' })).body.payment;
    const escrow = p.funding.depositAddress.address as string;
    const payer = await newPayer(15n * USDC);
    // Consecutive blocks: the second is still confirming when the first makes the Payment accepted.
    await payTo(payer, escrow, 10n * USDC);
    await payTo(payer, escrow, 5n * USDC);
    const done = await waitForPayment(
      m,
      p.id,
      'succeeded with the excess held',
      (x) => x.status === 'succeeded' && x.incidentRecoverySummary.count === 1,
    );
    assert.equal(done.incidentRecoverySummary.requestedAmountAtomic, String(5n * USDC));
    assert.equal(done.incidentRecoverySummary.pendingCount, 1);
    assert.deepEqual(await recoveryHolds(m, p.id), [['5000000', 'pending']]);
    // Net of fees settled; the 5 USDC wait in escrow as the recipient's pending balance.
    const [[settled, pending]] = await balancesOf(m);
    assert.equal(pending, String(5n * USDC));
    assert.equal(BigInt(settled!), BigInt(done.fees.merchantNetAmountAtomic));
    assert.deepEqual(await escrowBooksAndChain(p.id, escrow), { books: 5n * USDC, chain: 5n * USDC });
    await assertLedgerBalanced();
  });

  test('while the full amount is confirming the payer is told to wait, not asked to pay again', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = (await createPayment(m, { amount: '10' })).body.payment;
    const payer = await newPayer(10n * USDC);
    // One block deep of the two the network needs: seen, not confirmed (automining mines nothing more).
    await payTo(payer, p.funding.depositAddress.address, 10n * USDC);
    // Not waitForPayment: its rounds mine blocks, and a block-woken Payment would be accepted first.
    await eventually(async () => (await getPayment(m, p.id)).payment.status === 'processing', 'processing', { mine: false });
    await eventually(
      async () => (await h.db.prisma.payment.findUniqueOrThrow({ where: { id: p.id } })).pendingAtomic.toFixed() !== '0',
      'the transfer counted as confirming',
      { mine: false },
    );
    const seen = await getPayment(m, p.id);
    assert.equal(seen.payment.status, 'processing');
    assert.deepEqual(seen.nextAction, { id: seen.nextAction.id, type: 'none', expiresAt: p.expiresAt, depositInstructions: null });
    const page = await fetch(p.checkout?.paymentUrl ?? `${h.baseUrl}/checkout/${p.id}`);
    const html = await page.text();
    assert.match(html, /data-phase="confirming"/);
    assert.match(html, /waiting for network confirmations\. Nothing more to send/);
    assert.doesNotMatch(html, /Send exactly/);
    await mine(1);
    await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
  });

  test('funds of an underpaid Payment that expires are held for recovery: in its balances and transactions', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = (await createPayment(m, { amount: '10', expiresInSeconds: 60 })).body.payment;
    const payer = await newPayer(4n * USDC);
    await payTo(payer, p.funding.depositAddress.address, 4n * USDC);
    await mine(1);
    await waitForPayment(m, p.id, '4 USDC confirmed', (x) => x.status === 'processing' && x.stage === 'awaiting_funds');
    assert.equal((await awaitWorkflowResult<{ status: string }>(h, p.id)).status, 'expired');
    const expired = await getPayment(m, p.id);
    assert.equal(expired.payment.status, 'expired');
    assert.equal(expired.payment.incidentRecoverySummary.requestedAmountAtomic, String(4n * USDC));
    assert.deepEqual(await balancesOf(m), [['0', String(4n * USDC)]]);
    assert.deepEqual(await recoveryHolds(m, p.id), [['4000000', 'pending']]);
    assert.deepEqual(await escrowBooksAndChain(p.id, p.funding.depositAddress.address), { books: 4n * USDC, chain: 4n * USDC });
    await assertLedgerBalanced();
  });

  test("a transfer after the Payment's workflow finished counts only once confirmed, and one reorged away counts for nothing", async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = (await createPayment(m, { expiresInSeconds: 60 })).body.payment;
    assert.equal((await awaitWorkflowResult<{ status: string }>(h, p.id)).status, 'expired');
    const escrow = p.funding.depositAddress.address as string;
    const payer = await newPayer(10n * USDC);

    // Seen at one block deep, then reorged away: nothing may be held for it.
    const snapshot = await rpc<string>('evm_snapshot');
    await payTo(payer, escrow, 3n * USDC);
    await eventually(async () => (await h.db.prisma.paymentTransfer.count({ where: { paymentId: p.id } })) > 0, 'the transfer seen', {
      mine: false,
    });
    assert.equal((await getPayment(m, p.id)).payment.incidentRecoverySummary.count, 0, 'not an incident while unconfirmed');
    assert.equal(await rpc('evm_revert', [snapshot]), true);
    await mine(3);
    // A later transfer, confirmed: that one is late funds.
    await payTo(payer, escrow, 2n * USDC);
    const late = await waitForPayment(m, p.id, 'late funds held', (x) => x.incidentRecoverySummary.count >= 1);
    assert.equal(late.status, 'expired');
    assert.equal(late.incidentRecoverySummary.count, 1);
    assert.equal(late.incidentRecoverySummary.requestedAmountAtomic, String(2n * USDC));
    assert.deepEqual(
      (await h.db.prisma.paymentTransfer.findMany({ where: { paymentId: p.id }, orderBy: { createdAt: 'asc' } })).map((t) => [
        t.amountAtomic.toFixed(),
        t.status,
        t.role,
      ]),
      [
        ['3000000', 'dropped', 'late'],
        ['2000000', 'confirmed', 'late'],
      ],
    );
    assert.deepEqual(await eventNames(p.id), ['payment.created', 'payment.expired', 'payment.late_received']);
    assert.deepEqual(await escrowBooksAndChain(p.id, escrow), { books: 2n * USDC, chain: 2n * USDC });
    await assertLedgerBalanced();
  });

  test("a retry after a 5xx that reuses the key with another body is 409 idempotency_conflict, never the other body's Payment", async () => {
    const h = await getHarness();
    const m = await newMerchant();
    // The same service while Temporal is down: the Payment commits, its workflow start fails.
    const down = createApi(
      await apiDepsOnHarness({
        engine: {
          startPayment: async () => {
            throw new Error('Temporal is unavailable');
          },
          cancelPayment: async () => ({ outcome: 'closed' as const }),
          advancePaymentClock: async () => undefined,
          kickWebhookDispatcher: async () => undefined,
        },
      }),
    );
    const server = await new Promise<import('node:http').Server>((resolve) => {
      const s = down.listen(0, '127.0.0.1', () => resolve(s));
    });
    const { port } = server.address() as import('node:net').AddressInfo;
    const key = `retry-after-5xx-${Date.now()}`;
    const body = (amount: string) => ({
      intent: 'receive',
      amount,
      assetCode: 'USDC',
      chainId: h.chainId,
      destination: { type: 'upa', accountId: m.accountId },
    });
    try {
      const first = await call('/v2/payments', {
        baseUrl: `http://127.0.0.1:${port}`,
        credential: m.cred,
        headers: { 'idempotency-key': key },
        body: body('10'),
      });
      assert.ok(first.status >= 500, first.text);
    } finally {
      server.close();
    }
    const changed = await call('/v2/payments', { credential: m.cred, headers: { 'idempotency-key': key }, body: body('25') });
    assert.equal(changed.status, 409, changed.text);
    assert.equal(changed.body.error.code, 'idempotency_conflict');
    // The identical retry gets the Payment the first attempt committed, and its workflow now runs.
    const same = await call('/v2/payments', { credential: m.cred, headers: { 'idempotency-key': key }, body: body('10') });
    assert.equal(same.status, 201, same.text);
    assert.equal(same.body.payment.paymentAmount.amount, '10');
    assert.equal(await h.db.prisma.payment.count({ where: { recipientAccountId: m.accountId } }), 1);
    assert.equal((await h.engine.describeWorkflow(same.body.payment.id)).status, 'RUNNING');
    const chain = h.chain.chains.get(h.chainId);
    assert.equal(
      await chain.getTokenBalance({ token: SANDBOX_TOKEN_ADDRESS, owner: same.body.payment.funding.depositAddress.address as Address }),
      0n,
    );
  });
});
