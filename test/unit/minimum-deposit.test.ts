import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { meetsMinimum } from '../../src/domain/amounts/pure/minimum-deposit';

const USDC = 1_000_000n;

describe("meetsMinimum: an asset's minimumDeposit, for Payments and deposits alike", () => {
  test('an amount equal to an inclusive minimum meets it; equal to an exclusive one, it does not', () => {
    assert.equal(meetsMinimum(USDC, { amountAtomic: USDC, inclusive: true }), true);
    assert.equal(meetsMinimum(USDC, { amountAtomic: USDC, inclusive: false }), false);
    assert.equal(meetsMinimum(USDC - 1n, { amountAtomic: USDC, inclusive: true }), false);
    assert.equal(meetsMinimum(USDC + 1n, { amountAtomic: USDC, inclusive: false }), true);
  });

  test('refuses a Payment exactly where create-payment refused it before (its own check, frozen)', () => {
    const refusedBefore = (amount: bigint, minimum: bigint, inclusive: boolean) =>
      amount <= 0n || amount < minimum || (!inclusive && amount === minimum);
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 24n), max: 10n ** 24n }),
        fc.bigInt({ min: 0n, max: 10n ** 24n }),
        fc.boolean(),
        (amount, minimum, inclusive) => {
          // Around the minimum, where the rule decides, as often as anywhere.
          for (const a of [amount, minimum - 1n, minimum, minimum + 1n]) {
            assert.equal(a <= 0n || !meetsMinimum(a, { amountAtomic: minimum, inclusive }), refusedBefore(a, minimum, inclusive));
          }
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
