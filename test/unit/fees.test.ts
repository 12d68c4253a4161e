import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_ENVIRONMENTS_FILE, loadEnvironments, ZEnvironmentConfig } from '../../src/config/environments';
import { splitFees, type FeeRates, type FeeSplit } from '../../src/domain/amounts/pure/fees';

/**
 * The rules splitFees replaced, frozen as they were. A deposit's fees are computed inside the
 * DepositWorkflow (its machine's detect), so they are part of recorded histories: the one split must
 * give what these gave, for every input, forever.
 */
const FROZEN = {
  /** deposit-machine's depositFees (net never below zero). */
  deposit(amountAtomic: bigint, platformFeeBps: number, partnerFeeBps: number) {
    const platformAtomic = (amountAtomic * BigInt(platformFeeBps)) / 10_000n;
    const partnerAtomic = (amountAtomic * BigInt(partnerFeeBps)) / 10_000n;
    const netAtomic = amountAtomic - platformAtomic - partnerAtomic;
    return { platformAtomic, partnerAtomic, netAtomic: netAtomic > 0n ? netAtomic : 0n };
  },
  /** payment-machine's splitFees (net unbounded: it differed only where rates total over 100%). */
  payment(grossAtomic: bigint, platformFeeBps: number, partnerFeeBps: number) {
    const platformAtomic = (grossAtomic * BigInt(platformFeeBps)) / 10_000n;
    const partnerAtomic = (grossAtomic * BigInt(partnerFeeBps)) / 10_000n;
    return { platformAtomic, partnerAtomic, netAtomic: grossAtomic - platformAtomic - partnerAtomic };
  },
};

const bps = fc.integer({ min: 0, max: 10_000 });
/** Rates an environment may configure: each 0-10000 bps, together at most 10000 (src/config/environments.ts). */
const configuredRates = bps.chain((platformFeeBps) =>
  fc.record({ platformFeeBps: fc.constant(platformFeeBps), partnerFeeBps: fc.integer({ min: 0, max: 10_000 - platformFeeBps }) }),
);
const RUNS = { numRuns: 5_000 };

/** Each caller of the split against the rule it had before, over the amounts and rates it can meet. */
const FROZEN_CASES: Array<{
  name: string;
  amounts: fc.Arbitrary<bigint>;
  rates: fc.Arbitrary<FeeRates>;
  frozen: (amountAtomic: bigint, platformFeeBps: number, partnerFeeBps: number) => FeeSplit;
}> = [
  {
    name: 'gives a deposit what its recorded histories computed, for every amount and pair of rates',
    amounts: fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
    rates: fc.record({ platformFeeBps: bps, partnerFeeBps: bps }),
    frozen: FROZEN.deposit,
  },
  {
    name: 'gives a Payment what it was quoted before, for every amount it accepts (positive) at configurable rates',
    amounts: fc.bigInt({ min: 1n, max: 10n ** 30n }),
    rates: configuredRates,
    frozen: FROZEN.payment,
  },
];

describe('splitFees: the one fee split of Payments and deposits', () => {
  for (const c of FROZEN_CASES) {
    test(c.name, () => {
      fc.assert(
        fc.property(c.amounts, c.rates, (amount, rates) => {
          assert.deepEqual(splitFees(amount, rates), c.frozen(amount, rates.platformFeeBps, rates.partnerFeeBps));
        }),
        RUNS,
      );
    });
  }

  test('splits the gross exactly: the fees and the net add up to it, and each fee is at most its share', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 30n }), configuredRates, (amount, rates) => {
        const s = splitFees(amount, rates);
        assert.equal(s.platformAtomic + s.partnerAtomic + s.netAtomic, amount);
        assert.ok(s.platformAtomic * 10_000n <= amount * BigInt(rates.platformFeeBps));
        assert.ok(s.partnerAtomic * 10_000n <= amount * BigInt(rates.partnerFeeBps));
      }),
      RUNS,
    );
  });

  test('rounds each fee down to a whole atomic unit, and the net takes the remainder', () => {
    assert.deepEqual(splitFees(12_500_000n, { platformFeeBps: 100, partnerFeeBps: 50 }), {
      platformAtomic: 125_000n,
      partnerAtomic: 62_500n,
      netAtomic: 12_312_500n,
    });
    assert.deepEqual(splitFees(199n, { platformFeeBps: 100, partnerFeeBps: 50 }), {
      platformAtomic: 1n,
      partnerAtomic: 0n,
      netAtomic: 198n,
    });
    assert.deepEqual(splitFees(999n, { platformFeeBps: 100, partnerFeeBps: 50 }), {
      platformAtomic: 9n,
      partnerAtomic: 4n,
      netAtomic: 986n,
    });
  });

  test('takes nothing at zero rates, and charges each fee to its own party', () => {
    assert.deepEqual(splitFees(1_000_000n, { platformFeeBps: 0, partnerFeeBps: 0 }), {
      platformAtomic: 0n,
      partnerAtomic: 0n,
      netAtomic: 1_000_000n,
    });
    assert.deepEqual(splitFees(1_000_000n, { platformFeeBps: 100, partnerFeeBps: 0 }), {
      platformAtomic: 10_000n,
      partnerAtomic: 0n,
      netAtomic: 990_000n,
    });
    assert.deepEqual(splitFees(1_000_000n, { platformFeeBps: 0, partnerFeeBps: 100 }), {
      platformAtomic: 0n,
      partnerAtomic: 10_000n,
      netAtomic: 990_000n,
    });
  });

  test('never leaves a net below zero, even at rates totalling over 100%', () => {
    assert.deepEqual(splitFees(100n, { platformFeeBps: 10_000, partnerFeeBps: 5_000 }), {
      platformAtomic: 100n,
      partnerAtomic: 50n,
      netAtomic: 0n,
    });
  });
});

describe('the fee rates an environment may configure', () => {
  test('refuses rates totalling over 100%, which would leave a Payment a net below zero', () => {
    const sandbox = loadEnvironments(DEFAULT_ENVIRONMENTS_FILE).environments.sandbox;
    assert.equal(ZEnvironmentConfig.safeParse({ ...sandbox, fees: { platformFeeBps: 5_000, partnerFeeBps: 5_000 } }).success, true);
    const over = ZEnvironmentConfig.safeParse({ ...sandbox, fees: { platformFeeBps: 5_000, partnerFeeBps: 5_001 } });
    assert.equal(over.success, false);
    assert.deepEqual(
      over.error!.issues.map((i) => i.path),
      [['fees']],
    );
  });
});
