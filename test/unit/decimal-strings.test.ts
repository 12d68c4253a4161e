import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Prisma } from '../../src/db/client';

describe('Decimal amounts read from the database', () => {
  test('turn into plain digits at any size a NUMERIC(78, 0) holds, so BigInt() takes them', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 78n - 1n }), (atomic) => {
        const text = new Prisma.Decimal(atomic.toString()).toString();
        assert.match(text, /^\d+$/);
        assert.equal(BigInt(text), atomic);
      }),
    );
  });
});
