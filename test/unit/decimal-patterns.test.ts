import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DECIMAL_PATTERN, POSITIVE_DECIMAL_PATTERN } from '../../src/domain/amounts/amounts';

/** Decimal-looking strings, zeros and leading zeros included. */
const decimalish = fc
  .tuple(fc.stringMatching(/^\d{1,6}$/), fc.option(fc.stringMatching(/^\d{0,6}$/)))
  .map(([whole, frac]) => (frac === null ? whole : `${whole}.${frac}`));

describe('the decimal patterns the document carries', () => {
  test('a positive decimal is exactly a decimal above zero', () => {
    fc.assert(
      fc.property(decimalish, (s) => {
        const positive = DECIMAL_PATTERN.test(s) && /[1-9]/.test(s);
        assert.equal(POSITIVE_DECIMAL_PATTERN.test(s), positive, s);
      }),
    );
    for (const zero of ['0', '0.0', '0.000000000']) assert.equal(POSITIVE_DECIMAL_PATTERN.test(zero), false, zero);
    for (const ok of ['1', '0.01', '12.50', '10']) assert.equal(POSITIVE_DECIMAL_PATTERN.test(ok), true, ok);
  });
});
