import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { initialFees, replacementFees, isUnderpriced, type FeePolicy, type Fees } from '../../src/chain/fees';

const GWEI = 1_000_000_000n;
const wei = (max: bigint) => fc.bigInt({ min: 0n, max });
const policyArb = fc.record({
  maxFeePerGasWei: fc.bigInt({ min: 1n, max: 1000n * GWEI }),
  priorityFeeWei: fc.bigInt({ min: 1n, max: 10n * GWEI }),
});
const feesArb = fc
  .record({ maxFeePerGas: fc.bigInt({ min: 1n, max: 1000n * GWEI }), tip: fc.bigInt({ min: 1n, max: 10n * GWEI }) })
  .map(({ maxFeePerGas, tip }): Fees => ({ maxFeePerGas, maxPriorityFeePerGas: tip > maxFeePerGas ? maxFeePerGas : tip }));

describe('EIP-1559 fees under a cap', () => {
  test('a new transaction pays twice the base fee plus the tip, capped, or waits when the cap is below base fee plus tip', () => {
    const policy: FeePolicy = { maxFeePerGasWei: 100n * GWEI, priorityFeeWei: 2n * GWEI };
    assert.deepEqual(initialFees(10n * GWEI, policy), {
      kind: 'send',
      fees: { maxFeePerGas: 22n * GWEI, maxPriorityFeePerGas: 2n * GWEI },
    });
    assert.deepEqual(initialFees(60n * GWEI, policy), {
      kind: 'send',
      fees: { maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: 2n * GWEI },
    });
    assert.deepEqual(initialFees(99n * GWEI, policy), { kind: 'wait', neededWei: 101n * GWEI });
  });

  test('property: a new transaction never exceeds the cap, always covers base fee plus tip when it is sent', () => {
    fc.assert(
      fc.property(wei(2000n * GWEI), policyArb, (baseFee, policy) => {
        const d = initialFees(baseFee, policy);
        if (d.kind === 'wait') return assert.ok(baseFee + policy.priorityFeeWei > policy.maxFeePerGasWei);
        assert.ok(d.fees.maxFeePerGas <= policy.maxFeePerGasWei);
        assert.ok(d.fees.maxFeePerGas >= baseFee + d.fees.maxPriorityFeePerGas);
        assert.equal(d.fees.maxPriorityFeePerGas, policy.priorityFeeWei);
      }),
    );
  });

  test('property: a replacement raises both fees by at least 10% (what a node requires), never above the cap, and pays the base fee', () => {
    fc.assert(
      fc.property(feesArb, wei(2000n * GWEI), policyArb, (prev, baseFee, policy) => {
        const d = replacementFees(prev, baseFee, policy);
        if (d.kind === 'keep') return assert.ok(!isUnderpriced(prev, baseFee));
        assert.ok(isUnderpriced(prev, baseFee));
        if (d.kind === 'capped') return assert.ok(d.neededWei > policy.maxFeePerGasWei);
        assert.ok(d.fees.maxFeePerGas <= policy.maxFeePerGasWei);
        assert.ok(d.fees.maxFeePerGas * 10n >= prev.maxFeePerGas * 11n);
        assert.ok(d.fees.maxPriorityFeePerGas * 10n >= prev.maxPriorityFeePerGas * 11n);
        assert.ok(d.fees.maxPriorityFeePerGas <= d.fees.maxFeePerGas);
        assert.ok(d.fees.maxFeePerGas >= baseFee + d.fees.maxPriorityFeePerGas);
        // Once replaced, the same base fee asks for nothing more.
        assert.equal(replacementFees(d.fees, baseFee, policy).kind, 'keep');
      }),
    );
  });

  test('property: monotone in the base fee: a higher base fee never asks for a lower replacement', () => {
    fc.assert(
      fc.property(feesArb, wei(1000n * GWEI), wei(1000n * GWEI), policyArb, (prev, a, b, policy) => {
        const [low, high] = a <= b ? [a, b] : [b, a];
        const [dl, dh] = [replacementFees(prev, low, policy), replacementFees(prev, high, policy)];
        if (dl.kind === 'replace' && dh.kind === 'replace') assert.ok(dh.fees.maxFeePerGas >= dl.fees.maxFeePerGas);
        if (dl.kind === 'capped') assert.equal(dh.kind, 'capped');
        if (dh.kind === 'keep') assert.equal(dl.kind, 'keep');
      }),
    );
  });
});
