import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { call } from '../support/api-client';
import { newPayer, tokenBalance } from '../support/chain';
import { getHarness } from '../support/harness';
import { until } from '../support/until';
import { endsWithBooksChecked } from '../support/books';
import { assertLedgerBalanced, newMerchant, type Merchant } from '../support/fixtures';
import { fundedVault, paidPayment, post, USDC, waitForReturn } from './support';

/** Holds a Payment's row lock until release(): a refund of it waits on the lock inside its transaction. */
async function holdPaymentLock(paymentId: string) {
  const h = await getHarness();
  const lock = await h.db.pool.connect();
  await lock.query('BEGIN');
  await lock.query('SELECT id FROM payments WHERE id = $1 FOR UPDATE', [paymentId]);
  return {
    async release() {
      await lock.query('ROLLBACK');
      lock.release();
    },
  };
}

/** Statements waiting on a row lock of payments (a refund's transaction queued behind holdPaymentLock). */
async function waitingOnPaymentLock(): Promise<number> {
  const h = await getHarness();
  const rows = await h.db.pool.query(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%FROM payments WHERE id%FOR UPDATE%'",
  );
  return rows.rows[0].n as number;
}

describe('Refunds from a vault', () => {
  endsWithBooksChecked();
  let m: Merchant;
  before(async () => {
    m = await newMerchant();
  });

  test('a refund decides on the vault balance read under its lock: a reserve that confirms meanwhile is not counted twice', async () => {
    const vault = await fundedVault(m, 10);
    const first = await paidPayment(m, 6);
    const second = await paidPayment(m, 6);
    const reserve = await post(m, `/v2/payments/${first.payment.id}/refunds`, {});
    assert.equal(reserve.status, 201, reserve.text);
    // 10 held, 6 reserved: 4 available. The second refund queues on its Payment's lock...
    const lock = await holdPaymentLock(second.payment.id);
    let answer: Promise<Awaited<ReturnType<typeof post>>> | undefined;
    try {
      answer = post(m, `/v2/payments/${second.payment.id}/refunds`, {});
      answer.catch(() => undefined); // awaited below
      await until(async (saw) => {
        const n = await waitingOnPaymentLock();
        saw(`${n} waiting`);
        return n >= 1;
      }, 'the second refund waiting on its Payment lock');
      // ...while the reserve confirms: 6 leave the vault on chain and stop being reserved.
      await waitForReturn(m, first.payment.id, 'refunds', reserve.body.refund.id, 'confirmed');
    } finally {
      await lock.release();
    }
    const res = await answer!;
    assert.equal(res.status, 409, res.text);
    assert.equal(res.body.error.details.reasonCode, 'vault_insufficient_balance');
    assert.equal(await tokenBalance(vault.address), USDC(4));
    assert.equal((await call(`/v2/payments/${second.payment.id}/refunds`, { credential: m.cred })).body.items.length, 0);
    await assertLedgerBalanced();
  });

  test('property: concurrent refunds of one Payment from one vault never pay out more than was received, the vault holds or its policy allows, and only to the payer', async () => {
    const ask = fc.record({ atomic: fc.integer({ min: 1, max: 3_000_000 }), to: fc.constantFrom('payer', 'stranger', 'default') });
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(ask, { minLength: 1, maxLength: 8 }),
        async (held, limit, asks) => {
          const who = await newMerchant();
          const vault = await fundedVault(who, held, USDC(limit));
          const { payment, payer } = await paidPayment(who, 4);
          const stranger = (await newPayer(0n)).address;
          const before = await tokenBalance(payer.address);
          const tries = await Promise.all(
            asks.map((a) => {
              const body = {
                amount: (a.atomic / 1_000_000).toFixed(6),
                ...(a.to === 'default' ? {} : { destinationAddress: a.to === 'payer' ? payer.address : stranger }),
              };
              return post(who, `/v2/payments/${payment.id}/refunds`, body);
            }),
          );
          const accepted = tries.filter((r) => r.status === 201).map((r) => r.body.refund);
          for (const r of tries.filter((x) => x.status !== 201)) assert.ok([400, 409].includes(r.status), r.text);
          const total = accepted.reduce((acc, r) => acc + BigInt(r.amount.amountAtomic), 0n);
          assert.ok(
            total <= USDC(4) && total <= USDC(held) && total <= USDC(limit),
            `${total} paid of 4 received, ${held} held, limit ${limit}`,
          );
          for (const r of accepted) {
            assert.equal(r.destinationAddress, payer.address.toLowerCase());
            await waitForReturn(who, payment.id, 'refunds', r.id, 'confirmed');
          }
          assert.equal(await tokenBalance(payer.address), before + total);
          assert.equal(await tokenBalance(stranger), 0n);
          assert.equal(await tokenBalance(vault.address), USDC(held) - total);
        },
      ),
      { numRuns: 3 },
    );
    await assertLedgerBalanced();
  });

  test('a refund obeys the vault policy: it counts against the spend limit with funding, and is refused past it or with no active policy', async () => {
    const other = await newMerchant();
    const vault = await fundedVault(other, 10, USDC(5));
    const a = await paidPayment(other, 4);
    const b = await paidPayment(other, 4);
    const all = await post(other, `/v2/payments/${a.payment.id}/refunds`, {});
    assert.equal(all.status, 201, all.text);
    const over = await post(other, `/v2/payments/${b.payment.id}/refunds`, { amount: '1.000001' });
    assert.equal(over.status, 409, over.text);
    assert.equal(over.body.error.details.reasonCode, 'vault_spend_limit_exceeded');
    const within = await post(other, `/v2/payments/${b.payment.id}/refunds`, { amount: '1' });
    assert.equal(within.status, 201, within.text);
    await waitForReturn(other, a.payment.id, 'refunds', all.body.refund.id, 'confirmed');
    await waitForReturn(other, b.payment.id, 'refunds', within.body.refund.id, 'confirmed');
    const view = (await call(`/v2/accounts/${other.accountId}/vault`, { credential: other.cred })).body.vault;
    assert.equal(view.spendPeriod.authorizedAtomic, String(USDC(5)));
    assert.equal(view.spendPeriod.remainingAtomic, '0');
    assert.equal(await tokenBalance(vault.address), USDC(5));

    // A vault with no active policy pays no refund.
    const bare = await newMerchant();
    const created = await call(`/v2/accounts/${bare.accountId}/vault`, { credential: bare.cred, body: {} });
    assert.equal(created.status, 201, created.text);
    const paid = await paidPayment(bare, 1);
    const refused = await post(bare, `/v2/payments/${paid.payment.id}/refunds`, {});
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.body.error.details.reasonCode, 'vault_policy_inactive');
  });
});
