import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  afterCheck,
  decideRecovery,
  decideRefund,
  incidentStatusFor,
  refundConfirmedEvent,
  refundSummaryOf,
  RETURN_STATUSES,
  type RefundFacts,
} from '../../src/domain/returns/fund-return-rules';
import { sharesByPayer } from '../../src/domain/payments/payer-shares';

const succeeded: Omit<RefundFacts, 'requestedAtomic'> = {
  paymentIntent: 'receive',
  paymentStatus: 'succeeded',
  paymentAmountAtomic: 10_000_000n,
  heldAtomic: 0n,
  payerShareAtomic: 10n ** 18n,
  payerHeldAtomic: 0n,
  hasVault: true,
  policyActive: true,
  tokenAllowed: true,
  limitAtomic: 10n ** 15n,
  spentInPeriodAtomic: 0n,
  vaultAvailableAtomic: 100_000_000n,
};

describe('Refund and recovery rules', () => {
  test('refunds accepted one after another never total more than the Payment, nor more than the vault holds', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.bigInt({ min: 0n, max: 10n ** 12n }),
        fc.array(fc.option(fc.bigInt({ min: -5n, max: 10n ** 12n }), { nil: null }), { maxLength: 30 }),
        (amount, vault, asks) => {
          let held = 0n;
          let available = vault;
          for (const ask of asks) {
            const d = decideRefund({
              ...succeeded,
              paymentAmountAtomic: amount,
              heldAtomic: held,
              requestedAtomic: ask,
              vaultAvailableAtomic: available,
            });
            if (!d.ok) continue;
            assert.ok(d.amountAtomic > 0n);
            held += d.amountAtomic;
            available -= d.amountAtomic;
          }
          assert.ok(held <= amount, `${held} > ${amount}`);
          assert.ok(available >= 0n);
        },
      ),
    );
  });

  test('refunds accepted one after another never spend more than the vault policy allows in the period', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 12n }),
        fc.bigInt({ min: 0n, max: 10n ** 12n }),
        fc.array(fc.bigInt({ min: 1n, max: 10n ** 11n }), { maxLength: 30 }),
        (limit, spentBefore, asks) => {
          let spent = spentBefore;
          for (const ask of asks) {
            const d = decideRefund({
              ...succeeded,
              paymentAmountAtomic: 10n ** 14n,
              requestedAtomic: ask,
              limitAtomic: limit,
              spentInPeriodAtomic: spent,
              vaultAvailableAtomic: 10n ** 18n,
            });
            assert.equal(d.ok, spent + ask <= limit);
            if (d.ok) spent += d.amountAtomic;
            else assert.deepEqual(d, { ok: false, reason: 'vault_spend_limit_exceeded' });
          }
          assert.ok(spent === spentBefore || spent <= limit);
        },
      ),
    );
    assert.deepEqual(decideRefund({ ...succeeded, policyActive: false, requestedAtomic: 1n }), {
      ok: false,
      reason: 'vault_policy_inactive',
    });
    assert.deepEqual(decideRefund({ ...succeeded, tokenAllowed: false, requestedAtomic: 1n }), {
      ok: false,
      reason: 'vault_token_not_allowed',
    });
  });

  test('only a succeeded receive Payment is refundable; no amount means the rest; zero is invalid', () => {
    assert.deepEqual(decideRefund({ ...succeeded, paymentStatus: 'expired', requestedAtomic: 1n }), {
      ok: false,
      reason: 'payment_not_refundable',
    });
    assert.deepEqual(decideRefund({ ...succeeded, paymentIntent: 'send', requestedAtomic: 1n }), {
      ok: false,
      reason: 'payment_not_refundable',
    });
    assert.deepEqual(decideRefund({ ...succeeded, heldAtomic: 4_000_000n, requestedAtomic: null }), { ok: true, amountAtomic: 6_000_000n });
    assert.deepEqual(decideRefund({ ...succeeded, heldAtomic: 10_000_000n, requestedAtomic: null }), {
      ok: false,
      reason: 'refund_exceeds_payment',
    });
    assert.deepEqual(decideRefund({ ...succeeded, requestedAtomic: 0n }), { ok: false, reason: 'refund_amount_invalid' });
    assert.deepEqual(decideRefund({ ...succeeded, hasVault: false, requestedAtomic: 1n }), { ok: false, reason: 'vault_missing' });
    assert.deepEqual(decideRefund({ ...succeeded, vaultAvailableAtomic: 1n, requestedAtomic: 2n }), {
      ok: false,
      reason: 'vault_insufficient_balance',
    });
  });

  test("refunds of a Payment paid from several addresses give each payer back at most its share, and no amount means that payer's rest", () => {
    const transfer = fc.record({ payer: fc.integer({ min: 0, max: 3 }), amount: fc.bigInt({ min: 1n, max: 10n ** 9n }) });
    const ask = fc.record({
      payer: fc.integer({ min: 0, max: 3 }),
      atomic: fc.option(fc.bigInt({ min: 1n, max: 10n ** 9n }), { nil: null }),
    });
    fc.assert(
      fc.property(fc.array(transfer, { minLength: 1, maxLength: 6 }), fc.array(ask, { maxLength: 20 }), (transfers, asks) => {
        const shares = sharesByPayer(transfers.map((t) => ({ fromAddress: `0x${t.payer}`, amountAtomic: t.amount, excessAtomic: 0n })));
        const total = shares.reduce((acc, x) => acc + x.amountAtomic, 0n);
        const refunded = new Map<string, bigint>();
        for (const a of asks) {
          const to = `0x${a.payer}`;
          const share = shares.find((x) => x.address === to)?.amountAtomic ?? 0n;
          const heldAtomic = [...refunded.values()].reduce((acc, x) => acc + x, 0n);
          const payerHeldAtomic = refunded.get(to) ?? 0n;
          const d = decideRefund({
            ...succeeded,
            paymentAmountAtomic: total,
            heldAtomic,
            payerShareAtomic: share,
            payerHeldAtomic,
            requestedAtomic: a.atomic,
            vaultAvailableAtomic: 10n ** 18n,
          });
          if (a.atomic === null && share - payerHeldAtomic > 0n) assert.deepEqual(d, { ok: true, amountAtomic: share - payerHeldAtomic });
          if (!d.ok) continue;
          refunded.set(to, payerHeldAtomic + d.amountAtomic);
        }
        for (const [to, amount] of refunded)
          assert.ok(amount <= (shares.find((x) => x.address === to)?.amountAtomic ?? 0n), `${to}: ${amount}`);
      }),
    );
    assert.deepEqual(decideRefund({ ...succeeded, payerShareAtomic: 3n, payerHeldAtomic: 1n, requestedAtomic: 3n }), {
      ok: false,
      reason: 'refund_exceeds_payer',
    });
    assert.deepEqual(decideRefund({ ...succeeded, payerShareAtomic: 3n, payerHeldAtomic: 3n, requestedAtomic: null }), {
      ok: false,
      reason: 'refund_exceeds_payer',
    });
  });

  test("payer shares: each sender's confirmed funding less the excess it carried, summed per address (any case), first payer first", () => {
    assert.deepEqual(
      sharesByPayer([
        { fromAddress: '0xBB', amountAtomic: 4n, excessAtomic: 0n },
        { fromAddress: '0xaa', amountAtomic: 1n, excessAtomic: 0n },
        { fromAddress: '0xbb', amountAtomic: 5n, excessAtomic: 2n },
        { fromAddress: '0xcc', amountAtomic: 2n, excessAtomic: 2n },
      ]),
      [
        { address: '0xbb', amountAtomic: 7n },
        { address: '0xaa', amountAtomic: 1n },
      ],
    );
  });

  test('an incident is recovered once; a failed recovery may be asked for again', () => {
    assert.deepEqual(decideRecovery({ incidentStatus: 'pending', liveRecovery: null }), { ok: true });
    assert.deepEqual(decideRecovery({ incidentStatus: 'failed', liveRecovery: null }), { ok: true });
    assert.deepEqual(decideRecovery({ incidentStatus: 'pending', liveRecovery: { status: 'broadcast' } }), {
      ok: false,
      reason: 'recovery_in_progress',
    });
    assert.deepEqual(decideRecovery({ incidentStatus: 'confirmed', liveRecovery: { status: 'confirmed' } }), {
      ok: false,
      reason: 'incident_already_recovered',
    });
    assert.deepEqual(RETURN_STATUSES.map(incidentStatusFor), ['pending', 'pending', 'confirmed', 'failed', 'requires_intervention']);
  });

  test('refundSummary: refunded at the full amount, pending while one moves, failed ones count for nothing', () => {
    const r = (status: string, amountAtomic: bigint) => ({ status, amountAtomic });
    assert.deepEqual(refundSummaryOf(10n, []), { status: 'none', count: 0, requestedAmountAtomic: '0', confirmedAmountAtomic: '0' });
    assert.deepEqual(refundSummaryOf(10n, [r('failed', 4n)]), {
      status: 'none',
      count: 0,
      requestedAmountAtomic: '0',
      confirmedAmountAtomic: '0',
    });
    assert.deepEqual(refundSummaryOf(10n, [r('confirmed', 4n), r('broadcast', 2n)]), {
      status: 'pending',
      count: 2,
      requestedAmountAtomic: '6',
      confirmedAmountAtomic: '4',
    });
    assert.deepEqual(refundSummaryOf(10n, [r('confirmed', 4n)]), {
      status: 'partially_refunded',
      count: 1,
      requestedAmountAtomic: '4',
      confirmedAmountAtomic: '4',
    });
    assert.deepEqual(refundSummaryOf(10n, [r('confirmed', 4n), r('confirmed', 6n)]).status, 'refunded');
    assert.equal(refundConfirmedEvent(10n, 4n), 'payment.partially_refunded');
    assert.equal(refundConfirmedEvent(10n, 10n), 'payment.refunded');
  });

  test('a reverted send is held for an operator, never resent; a pending one keeps polling', () => {
    assert.equal(afterCheck('confirmed'), 'confirmed');
    assert.equal(afterCheck('reverted'), 'requires_intervention');
    assert.equal(afterCheck('pending'), null);
  });
});
