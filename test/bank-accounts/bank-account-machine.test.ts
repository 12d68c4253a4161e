import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  BANK_ACCOUNT_STATUSES,
  decideBankAccount,
  initialBankAccountState,
  type BankAccountEvent,
  type BankAccountState,
} from '../../src/domain/bank-accounts/bank-account-machine';

const at = new Date('2026-11-23T04:00:00.000Z');
const arbEvent: fc.Arbitrary<BankAccountEvent> = fc.oneof(
  fc.constant<BankAccountEvent>({ type: 'verified', at }),
  fc.option(fc.string({ maxLength: 20 }), { nil: null }).map<BankAccountEvent>((reason) => ({ type: 'verification_failed', at, reason })),
  fc.constant<BankAccountEvent>({ type: 'disable', at }),
);

describe('Bank account state machine', () => {
  test('a new account is pending_verification at statusVersion 1 and verification version 1', () => {
    assert.deepEqual(initialBankAccountState(), {
      status: 'pending_verification',
      statusVersion: 1,
      verificationVersion: 1,
      verifiedAt: null,
      disabledAt: null,
      failureReason: null,
    });
  });

  test('pending_verification -> verified sets verifiedAt and moves the verification version', () => {
    const d = decideBankAccount(initialBankAccountState(), { type: 'verified', at });
    assert.equal(d.kind, 'changed');
    if (d.kind !== 'changed') return;
    assert.deepEqual(d.state, {
      ...initialBankAccountState(),
      status: 'verified',
      statusVersion: 2,
      verificationVersion: 2,
      verifiedAt: at,
    });
  });

  test('pending_verification -> verification_failed keeps the provider reason and no verifiedAt', () => {
    const d = decideBankAccount(initialBankAccountState(), { type: 'verification_failed', at, reason: 'account_not_found' });
    assert.equal(d.kind, 'changed');
    if (d.kind !== 'changed') return;
    assert.equal(d.state.status, 'verification_failed');
    assert.equal(d.state.failureReason, 'account_not_found');
    assert.equal(d.state.verifiedAt, null);
  });

  test('a late verified after a failure or a disable is refused; a repeated event changes nothing', () => {
    const failed: BankAccountState = { ...initialBankAccountState(), status: 'verification_failed', statusVersion: 2 };
    assert.equal(decideBankAccount(failed, { type: 'verified', at }).kind, 'refused');
    const disabled: BankAccountState = { ...initialBankAccountState(), status: 'disabled', statusVersion: 3, disabledAt: at };
    assert.equal(decideBankAccount(disabled, { type: 'verified', at }).kind, 'refused');
    assert.equal(decideBankAccount(disabled, { type: 'disable', at }).kind, 'unchanged');
    const verified: BankAccountState = { ...initialBankAccountState(), status: 'verified', statusVersion: 2, verifiedAt: at };
    assert.equal(decideBankAccount(verified, { type: 'verified', at }).kind, 'unchanged');
  });

  test('property: no sequence of events leaves the allowed statuses, and statusVersion grows by exactly one per change', () => {
    fc.assert(
      fc.property(fc.array(arbEvent, { maxLength: 12 }), (events) => {
        let state = initialBankAccountState();
        let changes = 0;
        for (const event of events) {
          const d = decideBankAccount(state, event);
          if (d.kind !== 'changed') continue;
          assert.ok(BANK_ACCOUNT_STATUSES.includes(d.state.status));
          assert.notEqual(d.state.status, state.status);
          assert.equal(d.state.statusVersion, state.statusVersion + 1);
          assert.ok(d.state.verificationVersion >= state.verificationVersion);
          state = d.state;
          changes += 1;
        }
        assert.equal(state.statusVersion, 1 + changes);
        // disabled is terminal; at most pending -> outcome -> disabled.
        assert.ok(changes <= 2);
        if (state.status === 'disabled') assert.equal(state.disabledAt, at);
      }),
    );
  });
});
