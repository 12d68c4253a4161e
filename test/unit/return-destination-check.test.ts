import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  checkReturnDestination,
  type ApprovalFacts,
  type DestinationFacts,
  type ReturnToCheck,
} from '../../src/domain/returns/pure/return-destination-check';

const PAYER = '0x1111111111111111111111111111111111111111';
const ELSEWHERE = '0x2222222222222222222222222222222222222222';

const recovery: ReturnToCheck = {
  id: 'recovery_1',
  kind: 'incident_recovery',
  paymentId: 'payment_1',
  incidentId: 'incident_1',
  toAddress: ELSEWHERE,
  approvalId: 'approval_1',
};

const approved: ApprovalFacts = {
  id: 'approval_1',
  action: 'recover-incident',
  targetType: 'payment',
  targetId: 'payment_1',
  params: { destinationAddress: ELSEWHERE.toUpperCase().replace('0X', '0x'), incidentId: 'incident_1' },
  status: 'approved',
  requestedBy: 'ops:alice',
  decidedBy: 'ops:bob',
  resultId: null,
};

const facts = (approval: ApprovalFacts | null, payers: string[] = [PAYER]): DestinationFacts => ({ payers, approval });

describe('The signer checks a return destination itself', () => {
  test('a return to its payer is paid whatever the case of the address, with no approval needed', () => {
    assert.deepEqual(
      checkReturnDestination({ ...recovery, toAddress: PAYER.toUpperCase().replace('0X', '0x'), approvalId: null }, facts(null)),
      {
        ok: true,
        via: 'payer',
      },
    );
  });

  test('another address is paid only under an approval two operators made for this Payment, incident and destination', () => {
    assert.deepEqual(checkReturnDestination(recovery, facts(approved)), { ok: true, via: 'approval' });
    assert.deepEqual(checkReturnDestination(recovery, facts(approved, [])), { ok: true, via: 'approval' });
  });

  test('each way an approval can fall short is refused with its own reason', () => {
    const cases: Array<[string, ReturnToCheck, ApprovalFacts | null, string]> = [
      ['no approval named', { ...recovery, approvalId: null }, null, 'destination_not_approved'],
      ['the named approval is missing', recovery, null, 'approval_not_found'],
      ['another approval was read', recovery, { ...approved, id: 'approval_2' }, 'approval_not_found'],
      ['pending', recovery, { ...approved, status: 'pending' }, 'approval_not_approved'],
      ['rejected', recovery, { ...approved, status: 'rejected' }, 'approval_not_approved'],
      ['expired', recovery, { ...approved, status: 'expired' }, 'approval_not_approved'],
      ['one operator asked and approved', recovery, { ...approved, decidedBy: 'ops:alice' }, 'approval_same_operator'],
      ['the same operator spelled otherwise', recovery, { ...approved, decidedBy: ' OPS:Alice ' }, 'approval_same_operator'],
      ['approved by nobody', recovery, { ...approved, decidedBy: null }, 'approval_same_operator'],
      ['another Payment', recovery, { ...approved, targetId: 'payment_2' }, 'approval_other_target'],
      ['another kind of target', recovery, { ...approved, targetType: 'deposit' }, 'approval_other_target'],
      ['another action', recovery, { ...approved, action: 'mark-settled' }, 'approval_other_target'],
      [
        'another incident',
        recovery,
        { ...approved, params: { ...(approved.params as object), incidentId: 'incident_2' } },
        'approval_other_target',
      ],
      [
        'another destination',
        recovery,
        { ...approved, params: { destinationAddress: PAYER, incidentId: 'incident_1' } },
        'approval_other_destination',
      ],
      ['no destination', recovery, { ...approved, params: { incidentId: 'incident_1' } }, 'approval_other_destination'],
      ['params not an object', { ...recovery, incidentId: null }, { ...approved, params: [ELSEWHERE] }, 'approval_other_destination'],
      ['already used by another return', recovery, { ...approved, resultId: 'recovery_2' }, 'approval_used'],
    ];
    for (const [name, r, approval, reason] of cases) {
      assert.deepEqual(checkReturnDestination(r, facts(approval)), { ok: false, reason }, name);
    }
    // The refund's approval action is `refund`, not a recovery's.
    const refund: ReturnToCheck = { ...recovery, id: 'refund_1', kind: 'refund', incidentId: null };
    assert.deepEqual(checkReturnDestination(refund, facts(approved)), { ok: false, reason: 'approval_other_target' });
    assert.deepEqual(checkReturnDestination(refund, facts({ ...approved, action: 'refund' })), { ok: true, via: 'approval' });
  });

  const address = fc.oneof(
    fc.constantFrom(PAYER, ELSEWHERE),
    fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 40, maxLength: 40 }).map((h) => `0x${h}`),
  );
  const cased = (a: string) => fc.constantFrom(a, a.toUpperCase().replace('0X', '0x'), a.toLowerCase());
  const operator = fc.constantFrom('ops:alice', 'ops:bob', 'OPS:ALICE', 'ops:carol');
  const approvalArb = fc.record({
    id: fc.constantFrom('approval_1', 'approval_2'),
    action: fc.constantFrom('recover-incident', 'refund', 'mark-settled', 'fail'),
    targetType: fc.constantFrom('payment', 'fund_return'),
    targetId: fc.constantFrom('payment_1', 'payment_2'),
    params: fc.oneof(
      fc.record(
        { destinationAddress: address.chain(cased), incidentId: fc.constantFrom('incident_1', 'incident_2') },
        { requiredKeys: [] },
      ),
      fc.constant(null),
    ),
    status: fc.constantFrom('pending', 'approved', 'rejected', 'expired'),
    requestedBy: operator,
    decidedBy: fc.option(operator, { nil: null }),
    resultId: fc.option(fc.constantFrom('recovery_1', 'recovery_2', 'refund_1'), { nil: null }),
  });
  const returnArb = fc.record({
    id: fc.constantFrom('recovery_1', 'refund_1'),
    kind: fc.constantFrom('incident_recovery' as const, 'refund' as const),
    paymentId: fc.constantFrom('payment_1', 'payment_2'),
    incidentId: fc.option(fc.constantFrom('incident_1', 'incident_2'), { nil: null }),
    toAddress: address.chain(cased),
    approvalId: fc.option(fc.constantFrom('approval_1', 'approval_2'), { nil: null }),
  });
  const payersArb = fc.array(address, { maxLength: 3 });

  test('property: whatever the row says, money goes only to a payer or to the destination an approval by two operators names', () => {
    fc.assert(
      fc.property(returnArb, payersArb, fc.option(approvalArb, { nil: null }), (r, payers, approval) => {
        const verdict = checkReturnDestination(r, { payers, approval });
        if (!verdict.ok) return;
        const toPayer = payers.some((p) => p.toLowerCase() === r.toAddress.toLowerCase());
        if (verdict.via === 'payer') {
          assert.ok(toPayer);
          return;
        }
        assert.ok(!toPayer && approval !== null);
        const params = approval.params as { destinationAddress?: string; incidentId?: string };
        assert.equal(approval.id, r.approvalId);
        assert.equal(approval.status, 'approved');
        assert.ok(approval.decidedBy !== null && approval.decidedBy.trim().toLowerCase() !== approval.requestedBy.trim().toLowerCase());
        assert.equal(approval.targetType, 'payment');
        assert.equal(approval.targetId, r.paymentId);
        assert.equal(params.destinationAddress?.toLowerCase(), r.toAddress.toLowerCase());
        if (r.incidentId !== null) assert.equal(params.incidentId, r.incidentId);
        assert.ok(approval.resultId === null || approval.resultId === r.id);
      }),
      { numRuns: 2000 },
    );
  });

  test('property: a destination that is not a payer is never paid without an approval, and the verdict ignores the approval for a payer', () => {
    fc.assert(
      fc.property(returnArb, payersArb, fc.option(approvalArb, { nil: null }), (r, payers, approval) => {
        const toPayer = payers.some((p) => p.toLowerCase() === r.toAddress.toLowerCase());
        const verdict = checkReturnDestination(r, { payers, approval });
        if (toPayer) assert.deepEqual(verdict, { ok: true, via: 'payer' });
        if (!toPayer && (r.approvalId === null || approval === null)) assert.equal(verdict.ok, false);
        // A row naming no approval is refused alike whatever approval exists.
        if (!toPayer && r.approvalId === null) assert.deepEqual(verdict, { ok: false, reason: 'destination_not_approved' });
      }),
      { numRuns: 2000 },
    );
  });
});
