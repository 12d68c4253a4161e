import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Prisma } from '../../src/generated/prisma/client';
import { PAYMENT_STATUSES, ZNextAction } from '../../src/domain/payments/payment.schemas';
import { remainingOf, toNextAction, type NextActionSource } from '../../src/domain/payments/payment-view';

const EXPIRES = new Date('2026-11-23T08:00:00.000Z');
const ESCROW = '0x1111111111111111111111111111111111111111';
const OPEN = new Set(['requires_payment_method', 'processing']);
const HOLD_REASONS = [
  'settlement_failed',
  'settlement_unconfirmed',
  'settlement_requires_intervention',
  'ledger_difference',
  'data_error',
  'provider_state_uncertain',
  'provider_failure',
];
const INCIDENT_STATUSES = ['pending', 'confirmed', 'failed', 'requires_intervention'];

function payment(overrides: Partial<NextActionSource> = {}): NextActionSource {
  return {
    status: 'requires_payment_method',
    operationalState: 'normal',
    operationalReasonCode: null,
    nextActionId: 'action_test',
    expiresAt: EXPIRES,
    amountAtomic: new Prisma.Decimal(10_000_000),
    receivedAtomic: new Prisma.Decimal(0),
    pendingAtomic: new Prisma.Decimal(0),
    escrowAddress: ESCROW,
    chainId: 31337,
    tokenAddress: '0x2222222222222222222222222222222222222222',
    assetCode: 'USDC',
    decimals: 6,
    incidents: [],
    ...overrides,
  };
}

const decimal = fc.bigInt({ min: 0n, max: 20_000_000n }).map((v) => new Prisma.Decimal(v.toString()));

/** Any Payment state the view can be asked about, including ones the machine keeps apart (the function must not care). */
const anyPayment: fc.Arbitrary<NextActionSource> = fc
  .record({
    status: fc.constantFrom(...PAYMENT_STATUSES),
    operationalState: fc.constantFrom('normal', 'retrying', 'requires_intervention'),
    operationalReasonCode: fc.option(fc.constantFrom(...HOLD_REASONS)),
    amountAtomic: fc.bigInt({ min: 1n, max: 20_000_000n }).map((v) => new Prisma.Decimal(v.toString())),
    receivedAtomic: decimal,
    pendingAtomic: decimal,
    escrowAddress: fc.option(fc.constant(ESCROW)),
    incidents: fc.array(fc.record({ status: fc.constantFrom(...INCIDENT_STATUSES) }), { maxLength: 3 }),
  })
  .map((s) => payment(s));

describe('nextAction: one variant per Payment state', () => {
  test('an open Payment asks for what is still owed, with the deposit instructions and the Payment expiry', () => {
    assert.deepEqual(toNextAction(payment({ receivedAtomic: new Prisma.Decimal(4_000_000) })), {
      id: 'action_test',
      type: 'transaction',
      expiresAt: EXPIRES.toISOString(),
      depositInstructions: {
        address: ESCROW,
        chainId: 31337,
        tokenAddress: '0x2222222222222222222222222222222222222222',
        assetCode: 'USDC',
        decimals: 6,
        amount: '6',
        amountAtomic: '6000000',
      },
    });
  });

  test('funds seen that cover the amount, confirming: none until the Payment expiry; accepted and settling (or retrying): none without one', () => {
    assert.deepEqual(toNextAction(payment({ status: 'processing', pendingAtomic: new Prisma.Decimal(10_000_000) })), {
      id: 'action_test',
      type: 'none',
      expiresAt: EXPIRES.toISOString(),
      depositInstructions: null,
    });
    for (const operationalState of ['normal', 'retrying']) {
      assert.deepEqual(toNextAction(payment({ status: 'accepted', operationalState, receivedAtomic: new Prisma.Decimal(10_000_000) })), {
        id: 'action_test',
        type: 'none',
        expiresAt: null,
        depositInstructions: null,
      });
    }
  });

  test('a hold an operator releases is waiting_for_review; one where the provider holds the money is contact_support', () => {
    const held = (reason: string) =>
      toNextAction(payment({ status: 'accepted', operationalState: 'requires_intervention', operationalReasonCode: reason }));
    assert.deepEqual(held('settlement_requires_intervention'), {
      id: 'action_test',
      type: 'waiting_for_review',
      expiresAt: null,
      depositInstructions: null,
      reasonCode: 'settlement_requires_intervention',
    });
    assert.equal(held('data_error')?.type, 'waiting_for_review');
    assert.deepEqual(held('provider_state_uncertain'), {
      id: 'action_test',
      type: 'contact_support',
      expiresAt: null,
      depositInstructions: null,
      reasonCode: 'provider_state_uncertain',
    });
    assert.equal(held('provider_failure')?.type, 'contact_support');
  });

  test('failed or expired with funds still held is contact_support (funds_held); without, or once recovered, null', () => {
    for (const status of ['failed', 'expired']) {
      assert.deepEqual(toNextAction(payment({ status, incidents: [{ status: 'confirmed' }, { status: 'pending' }] })), {
        id: 'action_test',
        type: 'contact_support',
        expiresAt: null,
        depositInstructions: null,
        reasonCode: 'funds_held',
      });
      assert.equal(toNextAction(payment({ status, incidents: [{ status: 'confirmed' }] })), null);
      assert.equal(toNextAction(payment({ status })), null);
    }
  });

  test('succeeded and cancelled are null, whatever is held', () => {
    for (const status of ['succeeded', 'cancelled']) {
      assert.equal(
        toNextAction(
          payment({
            status,
            operationalState: 'requires_intervention',
            operationalReasonCode: 'provider_failure',
            incidents: [{ status: 'pending' }],
          }),
        ),
        null,
      );
    }
  });

  test('property: every state gets exactly one advertised variant (or null), instructions only on transaction', () => {
    fc.assert(
      fc.property(anyPayment, (p) => {
        const action = toNextAction(p);
        // The schema is the discriminated union the API advertises: what is produced parses, unchanged.
        assert.deepEqual(ZNextAction.parse(action), action);
        if (action === null) return;
        assert.equal(action.id, p.nextActionId);
        assert.equal(action.depositInstructions !== null, action.type === 'transaction');
      }),
    );
  });

  test('property: which variant follows from status, hold and held funds alone', () => {
    fc.assert(
      fc.property(anyPayment, (p) => {
        const type = toNextAction(p)?.type ?? null;
        const held = p.operationalState === 'requires_intervention';
        const fundsHeld = p.incidents.some((i) => i.status !== 'confirmed');
        if (p.status === 'succeeded' || p.status === 'cancelled') assert.equal(type, null);
        else if (held) assert.ok(type === 'waiting_for_review' || type === 'contact_support', String(type));
        else if (p.status === 'failed' || p.status === 'expired') assert.equal(type, fundsHeld ? 'contact_support' : null);
        else if (!p.escrowAddress) assert.equal(type, null);
        else if (OPEN.has(p.status)) assert.equal(type, remainingOf(p) > 0n ? 'transaction' : 'none');
        else assert.equal(type, 'none');
      }),
    );
  });

  test('property: a transaction asks for exactly what is still owed, never for funds already seen', () => {
    fc.assert(
      fc.property(anyPayment, (p) => {
        const action = toNextAction(p);
        if (action?.type !== 'transaction') return;
        const owed = BigInt(p.amountAtomic.toFixed()) - BigInt(p.receivedAtomic.toFixed()) - BigInt(p.pendingAtomic.toFixed());
        assert.equal(action.depositInstructions.amountAtomic, owed.toString());
        assert.ok(owed > 0n);
        assert.equal(action.expiresAt, p.expiresAt.toISOString());
      }),
    );
  });
});
