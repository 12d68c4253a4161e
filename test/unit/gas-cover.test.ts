import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { coverWei, payerNeedWei, topUpWei, upfrontWei, type GasCost } from '../../src/chain/gas-cover';
import { initialFees, replacementFees, type FeePolicy } from '../../src/chain/fees';

const GWEI = 1_000_000_000n;
const ETHER = 10n ** 18n;
const capArb = fc.bigInt({ min: 1n, max: 2000n * GWEI });
const costArb = (cap: bigint) =>
  fc.record({
    gasLimit: fc.bigInt({ min: 21_000n, max: 2_000_000n }),
    maxFeePerGas: fc.bigInt({ min: 1n, max: cap }),
    valueWei: fc.bigInt({ min: 0n, max: 10n * ETHER }),
  });
const withCap = <T>(f: (cap: bigint) => fc.Arbitrary<T>) => capArb.chain((cap) => f(cap).map((v) => ({ cap, v })));

describe('gas that covers the transaction', () => {
  test('the settlement leg from the failed CI run: 76,381 gas at 139 gwei needs 0.0106 ETH up front, 0.038 at the 500 gwei cap', () => {
    const leg: GasCost = { gasLimit: 76_381n, maxFeePerGas: 139n * GWEI, valueWei: 0n };
    assert.equal(upfrontWei(leg), 10_616_959n * GWEI);
    assert.equal(coverWei(leg, 500n * GWEI), 38_190_500n * GWEI);
    // The old rule topped up 0.01 ETH below 0.005: a payer left with 0.009 ETH could not send it.
    assert.ok(upfrontWei(leg) > 9_000_000n * GWEI);
    // Now it is topped up by what is missing, in steps of the network's 0.01 ETH.
    assert.equal(topUpWei(9_000_000n * GWEI, coverWei(leg, 500n * GWEI), ETHER / 100n), 3n * (ETHER / 100n));
  });

  test('property: the cover pays for the transaction at its own fee and for any replacement the fee rules can sign', () => {
    const policyArb = fc.record({ maxFeePerGasWei: capArb, priorityFeeWei: fc.bigInt({ min: 1n, max: 5n * GWEI }) });
    fc.assert(
      fc.property(
        policyArb,
        fc.bigInt({ min: 0n, max: 2000n * GWEI }),
        fc.array(fc.bigInt({ min: 0n, max: 3000n * GWEI }), { maxLength: 6 }),
        fc.bigInt({ min: 21_000n, max: 500_000n }),
        (policy: FeePolicy, base, rises, gasLimit) => {
          const first = initialFees(base, policy);
          if (first.kind === 'wait') return;
          const tx = { gasLimit, maxFeePerGas: first.fees.maxFeePerGas, valueWei: 0n };
          const cover = coverWei(tx, policy.maxFeePerGasWei);
          assert.ok(cover >= upfrontWei(tx));
          let fees = first.fees;
          for (const baseFee of rises) {
            const next = replacementFees(fees, baseFee, policy);
            if (next.kind !== 'replace') continue;
            fees = next.fees;
            assert.ok(cover >= upfrontWei({ ...tx, maxFeePerGas: fees.maxFeePerGas }), `a replacement at ${fees.maxFeePerGas} is covered`);
          }
        },
      ),
    );
  });

  test('property: a payer holding its need can send the next transaction with all the others still pending', () => {
    fc.assert(
      fc.property(
        withCap((cap) =>
          fc
            .tuple(costArb(cap), fc.array(costArb(cap), { maxLength: 4 }), fc.bigInt({ min: 0n, max: ETHER }))
            .map(([next, inFlight, floor]) => ({ next, inFlight, floor })),
        ),
        ({ cap, v: { next, inFlight, floor } }) => {
          const need = payerNeedWei([next, ...inFlight], cap, floor);
          const pending = [next, ...inFlight].reduce((sum, tx) => sum + upfrontWei(tx), 0n);
          assert.ok(need >= pending, 'every pending transaction at its own fee');
          assert.ok(need >= floor, 'never under the floor');
          assert.equal(
            payerNeedWei([next, ...inFlight], cap, 0n),
            [next, ...inFlight].reduce((s, tx) => s + coverWei(tx, cap), 0n),
          );
        },
      ),
    );
  });

  test('property: a top-up brings the balance to the need, overshooting by less than one step, and is a whole number of steps', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 100n * ETHER }),
        fc.bigInt({ min: 0n, max: 100n * ETHER }),
        fc.bigInt({ min: 1n, max: ETHER }),
        (balance, need, step) => {
          const topUp = topUpWei(balance, need, step);
          if (balance >= need) return assert.equal(topUp, 0n);
          assert.equal(topUp % step, 0n);
          assert.ok(balance + topUp >= need, 'covers the need');
          assert.ok(balance + topUp - need < step, 'less than one step more');
        },
      ),
    );
  });

  test('a step of zero is refused rather than dividing by it', () => {
    assert.throws(() => topUpWei(0n, 1n, 0n), RangeError);
  });
});
