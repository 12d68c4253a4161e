import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  checkReturnAmount,
  checkReturnDestination,
  type AmountFacts,
  type AmountToCheck,
  type ApprovalFacts,
  type DestinationFacts,
  type ReturnHolding,
  type ReturnToCheck,
} from '../../src/domain/returns/pure/return-destination-check';
import { decideRefund } from '../../src/domain/returns/fund-return-rules';

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

describe('The signer checks a return amount against the books', () => {
  const A = '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
  const B = '0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
  const TOKEN = '0x3333333333333333333333333333333333333333';
  const refund: AmountToCheck = {
    id: 'refund_1',
    kind: 'refund',
    paymentId: 'payment_1',
    incidentId: null,
    toAddress: A,
    approvalId: null,
    amountAtomic: 1n,
    chainId: 1,
    tokenAddress: TOKEN,
    vaultId: 'vault_recipient',
  };
  const recovery: AmountToCheck = { ...refund, id: 'recovery_1', kind: 'incident_recovery', incidentId: 'incident_1', vaultId: null };
  const books: AmountFacts = {
    paymentIntent: 'receive',
    paymentStatus: 'succeeded',
    paymentAmountAtomic: 5_000_000n,
    shares: [
      { address: A, amountAtomic: 3_000_000n },
      { address: B, amountAtomic: 2_000_000n },
    ],
    incident: { amountAtomic: 1_000_000n },
    asset: { chainId: 1, tokenAddress: TOKEN },
    recipientVaultId: 'vault_recipient',
    returns: [],
    approval: null,
  };
  const held = (
    id: string,
    toAddress: string,
    amountAtomic: bigint,
    status = 'pending',
    kind = 'refund',
    incidentId: string | null = null,
  ) => ({
    id,
    kind,
    incidentId,
    toAddress,
    status,
    amountAtomic,
  });
  const amountOf = (r: AmountToCheck, amountAtomic: bigint, f: AmountFacts = books, via: 'payer' | 'approval' = 'payer') =>
    checkReturnAmount({ ...r, amountAtomic }, via, f);

  test("a refund to a payer takes at most that payer's share less its other refunds, partial refunds included", () => {
    assert.deepEqual(amountOf(refund, 1_000_000n), { ok: true, allowedAtomic: 3_000_000n });
    assert.deepEqual(amountOf(refund, 3_000_000n), { ok: true, allowedAtomic: 3_000_000n });
    assert.deepEqual(amountOf(refund, 3_000_001n), { ok: false, reason: 'amount_exceeds_books', allowedAtomic: 3_000_000n });
    assert.deepEqual(amountOf({ ...refund, toAddress: B }, 2_000_001n).ok, false);
    // 1 of A's 3 already refunded (its address spelled otherwise: compared without case).
    const partial = { ...books, returns: [held('refund_0', A.toUpperCase().replace('0X', '0x'), 1_000_000n, 'confirmed')] };
    assert.deepEqual(amountOf(refund, 2_000_000n, partial), { ok: true, allowedAtomic: 2_000_000n });
    assert.equal(amountOf(refund, 2_000_001n, partial).ok, false);
    // B's refunds do not eat A's share.
    assert.equal(amountOf(refund, 3_000_000n, { ...books, returns: [held('refund_0', B, 2_000_000n)] }).ok, true);
  });

  test('the return itself does not count against itself (a retry, a resend), a failed return frees its amount, every other status holds it', () => {
    assert.equal(amountOf(refund, 3_000_000n, { ...books, returns: [held('refund_1', A, 3_000_000n, 'broadcast')] }).ok, true);
    assert.equal(amountOf(refund, 3_000_000n, { ...books, returns: [held('refund_0', A, 3_000_000n, 'failed')] }).ok, true);
    for (const status of ['pending', 'broadcast', 'confirmed', 'requires_intervention'])
      assert.deepEqual(amountOf(refund, 1n, { ...books, returns: [held('refund_0', A, 3_000_000n, status)] }), {
        ok: false,
        reason: 'amount_exceeds_books',
        allowedAtomic: 0n,
      });
  });

  test("no refund goes beyond the Payment's rest, nor out of a Payment that is not a succeeded receive", () => {
    // Shares that count more than the Payment (as an old book could): the Payment's amount still bounds.
    const over = { ...books, paymentAmountAtomic: 2_000_000n };
    assert.deepEqual(amountOf(refund, 2_000_001n, over), { ok: false, reason: 'amount_exceeds_books', allowedAtomic: 2_000_000n });
    assert.equal(amountOf(refund, 1n, { ...over, returns: [held('refund_0', B, 2_000_000n)] }).ok, false);
    for (const facts of [{ paymentStatus: 'expired' }, { paymentStatus: 'processing' }, { paymentIntent: 'send' }])
      assert.deepEqual(amountOf(refund, 1n, { ...books, ...facts }), { ok: false, reason: 'amount_exceeds_books', allowedAtomic: 0n });
  });

  test("a refund elsewhere under an approval takes the Payment's rest, capped by the approval's amount if it records one", () => {
    const elsewhere = { ...refund, toAddress: ELSEWHERE, approvalId: 'approval_1' };
    const approval = { ...approved, action: 'refund', params: { destinationAddress: ELSEWHERE } };
    const facts = { ...books, approval, returns: [held('refund_0', A, 1_000_000n)] };
    assert.deepEqual(amountOf(elsewhere, 4_000_000n, facts, 'approval'), { ok: true, allowedAtomic: 4_000_000n });
    assert.equal(amountOf(elsewhere, 4_000_001n, facts, 'approval').ok, false);
    const capped = { ...facts, approval: { ...approval, params: { destinationAddress: ELSEWHERE, amountAtomic: '1500000' } } };
    assert.deepEqual(amountOf(elsewhere, 1_500_000n, capped, 'approval'), { ok: true, allowedAtomic: 1_500_000n });
    assert.equal(amountOf(elsewhere, 1_500_001n, capped, 'approval').ok, false);
    // An amount the signer cannot read as atomic units allows nothing.
    for (const params of [{ amount: '1.5' }, { amountAtomic: '1.5' }, { amountAtomic: 1_500_000 }, { amountAtomic: '-1' }])
      assert.equal(
        amountOf(elsewhere, 1n, { ...facts, approval: { ...approval, params: { destinationAddress: ELSEWHERE, ...params } } }, 'approval')
          .ok,
        false,
        JSON.stringify(params),
      );
  });

  test("a recovery takes at most its incident's amount less that incident's other returns; other incidents don't count", () => {
    assert.deepEqual(amountOf(recovery, 1_000_000n), { ok: true, allowedAtomic: 1_000_000n });
    assert.deepEqual(amountOf(recovery, 1_000_001n), { ok: false, reason: 'amount_exceeds_books', allowedAtomic: 1_000_000n });
    const returns = [
      held('recovery_0', A, 400_000n, 'requires_intervention', 'incident_recovery', 'incident_1'),
      held('recovery_2', A, 1_000_000n, 'pending', 'incident_recovery', 'incident_2'),
      held('recovery_3', A, 1_000_000n, 'failed', 'incident_recovery', 'incident_1'),
      held('recovery_1', A, 1_000_000n, 'broadcast', 'incident_recovery', 'incident_1'),
      held('refund_0', A, 3_000_000n),
    ];
    assert.deepEqual(amountOf(recovery, 600_000n, { ...books, returns }), { ok: true, allowedAtomic: 600_000n });
    assert.equal(amountOf(recovery, 600_001n, { ...books, returns }).ok, false);
    assert.deepEqual(amountOf(recovery, 1n, { ...books, incident: null }), {
      ok: false,
      reason: 'amount_exceeds_books',
      allowedAtomic: 0n,
    });
    assert.equal(amountOf({ ...recovery, incidentId: null }, 1n).ok, false);
    const approval = { ...approved, params: { destinationAddress: ELSEWHERE, incidentId: 'incident_1', amountAtomic: '10' } };
    assert.deepEqual(amountOf(recovery, 10n, { ...books, approval }, 'approval'), { ok: true, allowedAtomic: 10n });
    assert.equal(amountOf(recovery, 11n, { ...books, approval }, 'approval').ok, false);
    // An approval's amount caps only a return that passed under it.
    assert.equal(amountOf(recovery, 11n, { ...books, approval }, 'payer').ok, true);
  });

  test('a return in another asset than the books hold is refused; the token compared without case', () => {
    assert.equal(amountOf({ ...refund, tokenAddress: TOKEN.toUpperCase().replace('0X', '0x') }, 1n).ok, true);
    assert.deepEqual(amountOf({ ...refund, tokenAddress: ELSEWHERE }, 1n), { ok: false, reason: 'asset_not_in_books', allowedAtomic: 0n });
    assert.deepEqual(amountOf({ ...recovery, chainId: 2 }, 1n), { ok: false, reason: 'asset_not_in_books', allowedAtomic: 0n });
    assert.equal(amountOf({ ...recovery, chainId: 2 }, 1n, { ...books, asset: { chainId: 2, tokenAddress: TOKEN } }).ok, true);
  });

  test("a refund paid from another vault than the recipient's, or from none, is refused; a recovery pays from the escrow whatever the row says", () => {
    assert.deepEqual(amountOf({ ...refund, vaultId: 'vault_someone_else' }, 1n), {
      ok: false,
      reason: 'source_not_in_books',
      allowedAtomic: 0n,
    });
    assert.equal(amountOf({ ...refund, vaultId: null }, 1n).ok, false);
    assert.equal(amountOf(refund, 1n, { ...books, recipientVaultId: null }).ok, false, 'a recipient with no vault refunds nothing');
    assert.equal(amountOf({ ...recovery, vaultId: 'vault_someone_else' }, 1n).ok, true);
  });

  const payer = fc.constantFrom(A, B, PAYER);
  const anyCase = (a: string) => fc.constantFrom(a, a.toUpperCase().replace('0X', '0x'));
  const statusArb = fc.constantFrom('pending', 'broadcast', 'confirmed', 'failed', 'requires_intervention');
  const sharesArb = fc.uniqueArray(fc.record({ address: payer, amountAtomic: fc.bigInt({ min: 1n, max: 10n ** 9n }) }), {
    selector: (s) => s.address,
    maxLength: 3,
  });
  const returnsArb = fc.array(
    fc.record({
      id: fc.constantFrom('refund_1', 'refund_2', 'refund_3', 'recovery_1', 'recovery_2'),
      kind: fc.constantFrom('refund', 'incident_recovery'),
      incidentId: fc.option(fc.constantFrom('incident_1', 'incident_2'), { nil: null }),
      toAddress: payer.chain(anyCase),
      status: statusArb,
      amountAtomic: fc.bigInt({ min: 1n, max: 10n ** 9n }),
    }),
    { maxLength: 6 },
  );
  const sumOf = (xs: Array<{ amountAtomic: bigint }>) => xs.reduce((acc, x) => acc + x.amountAtomic, 0n);

  test('property: a refund to a payer is accepted iff 0 < amount <= min(its share less its other live refunds, the Payment less all other live refunds)', () => {
    fc.assert(
      fc.property(
        sharesArb,
        fc.bigInt({ min: 1n, max: 3n * 10n ** 9n }),
        returnsArb,
        payer.chain(anyCase),
        fc.bigInt({ min: -1n, max: 3n * 10n ** 9n }),
        (shares, paymentAmountAtomic, returns, to, amountAtomic) => {
          const facts = { ...books, paymentAmountAtomic, shares, returns };
          const verdict = checkReturnAmount({ ...refund, toAddress: to, amountAtomic }, 'payer', facts);
          const others = returns.filter((x) => x.id !== refund.id && x.kind === 'refund' && x.status !== 'failed');
          const share = shares.find((s) => s.address === to.toLowerCase())?.amountAtomic ?? 0n;
          const payerRest = share - sumOf(others.filter((x) => x.toAddress.toLowerCase() === to.toLowerCase()));
          const rest = paymentAmountAtomic - sumOf(others);
          const bound = payerRest < rest ? payerRest : rest;
          assert.equal(verdict.ok, amountAtomic > 0n && amountAtomic <= bound);
          assert.equal(verdict.allowedAtomic, bound > 0n ? bound : 0n);
          // The create's rule, asked with the same facts, agrees.
          const create = decideRefund({
            paymentIntent: 'receive',
            paymentStatus: 'succeeded',
            paymentAmountAtomic,
            heldAtomic: sumOf(others),
            requestedAtomic: amountAtomic,
            payerShareAtomic: share,
            payerHeldAtomic: share - payerRest,
            hasVault: true,
            policyActive: true,
            tokenAllowed: true,
            limitAtomic: 10n ** 18n,
            spentInPeriodAtomic: 0n,
            vaultAvailableAtomic: 10n ** 18n,
          });
          assert.equal(verdict.ok, create.ok);
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('property: a recovery is accepted iff 0 < amount <= its incident less the other live returns of that incident', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 9n }),
        returnsArb,
        fc.bigInt({ min: -1n, max: 2n * 10n ** 9n }),
        (incidentAmount, returns, amountAtomic) => {
          const verdict = checkReturnAmount({ ...recovery, amountAtomic }, 'payer', {
            ...books,
            incident: { amountAtomic: incidentAmount },
            returns,
          });
          const rest =
            incidentAmount - sumOf(returns.filter((x) => x.id !== recovery.id && x.incidentId === 'incident_1' && x.status !== 'failed'));
          assert.equal(verdict.ok, amountAtomic > 0n && amountAtomic <= rest);
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('property: returns signed one after another never pay a payer more than its share, nor more than the Payment, in all', () => {
    fc.assert(
      fc.property(
        sharesArb,
        fc.array(fc.record({ to: payer, amountAtomic: fc.bigInt({ min: 1n, max: 10n ** 9n }), failsAfter: fc.boolean() }), {
          maxLength: 12,
        }),
        (shares, asks) => {
          const paymentAmountAtomic = sumOf(shares);
          const rows: ReturnHolding[] = [];
          asks.forEach((ask, i) => {
            const row = {
              id: `refund_${i}`,
              kind: 'refund',
              incidentId: null,
              toAddress: ask.to,
              status: 'pending',
              amountAtomic: ask.amountAtomic,
            };
            rows.push(row);
            const verdict = checkReturnAmount({ ...refund, id: row.id, toAddress: ask.to, amountAtomic: ask.amountAtomic }, 'payer', {
              ...books,
              paymentAmountAtomic,
              shares,
              returns: rows,
            });
            // Refused (held, then failed by an operator) or sent and later failed: its amount is free again.
            row.status = verdict.ok && !ask.failsAfter ? 'confirmed' : 'failed';
          });
          const paid = rows.filter((r) => r.status === 'confirmed');
          assert.ok(sumOf(paid) <= paymentAmountAtomic);
          for (const s of shares) assert.ok(sumOf(paid.filter((r) => r.toAddress === s.address)) <= s.amountAtomic);
          assert.ok(paid.every((r) => shares.some((s) => s.address === r.toAddress)));
        },
      ),
      { numRuns: 1000 },
    );
  });
});
