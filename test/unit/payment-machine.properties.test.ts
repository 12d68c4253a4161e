import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  decideCancel,
  initialState,
  isTerminal,
  onExpired,
  onSettlementConfirmed,
  onTransferDetected,
  onTransfersVerified,
  type PaymentState,
  type Transition,
} from '../../src/domain/payments/pure/payment-machine';

const NOW = '2026-11-22T00:00:00.000Z';

type Action =
  | { kind: 'see'; key: number; amount: bigint }
  | { kind: 'verify'; key: number; outcome: 'confirmed' | 'dropped' | 'pending' }
  | { kind: 'expire' }
  | { kind: 'cancel' }
  | { kind: 'settled' };

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('see' as const),
      key: fc.integer({ min: 0, max: 5 }),
      amount: fc.bigInt({ min: 1n, max: 30n }),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('verify' as const),
      key: fc.integer({ min: 0, max: 5 }),
      outcome: fc.constantFrom('confirmed' as const, 'dropped' as const, 'pending' as const),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'expire' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'cancel' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'settled' as const }) },
);

function step(s: PaymentState, a: Action): Transition | null {
  switch (a.kind) {
    case 'see':
      return onTransferDetected(s, { key: `k${a.key}`, amountAtomic: a.amount });
    case 'verify':
      return onTransfersVerified(s, [{ key: `k${a.key}`, outcome: a.outcome }], NOW);
    case 'expire':
      return onExpired(s);
    case 'cancel': {
      const d = decideCancel(s, 'other', null, NOW);
      return d.outcome === 'cancelled' ? d.transition : null;
    }
    case 'settled':
      return s.status === 'accepted' ? onSettlementConfirmed(s, '0xsettled', NOW) : null;
  }
}

/**
 * Every unit of value that reaches escrow is accounted for exactly once, whatever order transfers,
 * confirmations, reorgs, expiry and cancellation come in: counted for the Payment (never above its
 * amount) or held for recovery as an incident, and only once it is confirmed.
 */
describe('payment machine properties', () => {
  test('confirmed funds are counted or held, never both, never twice, never before confirmation', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 40n }), fc.array(action, { maxLength: 40 }), (required, actions) => {
        let s = initialState('receive', required);
        const incidents: Array<{ kind: string; amountAtomic: bigint; transferKey: string | null }> = [];
        for (const a of actions) {
          const before = s;
          const t = step(s, a);
          if (!t) continue;
          assert.equal(t.fromStatusVersion, before.statusVersion);
          assert.equal(
            t.state.statusVersion - before.statusVersion,
            t.state.status === before.status ? 0 : 1,
            'one version per status change',
          );
          if (isTerminal(before) && before.status !== 'succeeded') assert.equal(t.state.status, before.status, 'final statuses stay final');
          for (const i of t.incidents) {
            if (i.transferKey) {
              const tr: PaymentState['transfers'][number] | undefined = t.state.transfers.find((x) => x.key === i.transferKey);
              assert.equal(tr?.status, 'confirmed', 'an incident only for a confirmed transfer');
              assert.ok(!incidents.some((x) => x.transferKey === i.transferKey), 'at most one incident per transfer');
            }
          }
          incidents.push(...t.incidents);
          s = t.state;

          assert.ok(s.confirmedAtomic <= s.requiredAtomic, 'never counts more than the amount');
          if (s.status === 'accepted' || s.status === 'succeeded') assert.equal(s.confirmedAtomic, s.requiredAtomic);
          const confirmedIn = s.transfers.filter((x) => x.status === 'confirmed').reduce((sum, x) => sum + x.amountAtomic, 0n);
          const heldFromTransfers = incidents.filter((i) => i.kind !== 'underpaid_expired').reduce((sum, i) => sum + i.amountAtomic, 0n);
          assert.equal(confirmedIn, s.confirmedAtomic + heldFromTransfers, 'each confirmed unit is counted or held, exactly once');
          if (s.status === 'expired') {
            const underpaid = incidents.filter((i) => i.kind === 'underpaid_expired').reduce((sum, i) => sum + i.amountAtomic, 0n);
            assert.equal(underpaid, s.confirmedAtomic, 'funds counted before expiry are held in full');
          }
        }
      }),
      { numRuns: 2000 },
    );
  });
});
