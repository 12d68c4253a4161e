import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/domain/requests/errors';
import { jsonText } from '../../src/domain/values/json-text';

test('an error whose details carry amounts as bigints answers them as decimal strings', () => {
  const body = new ApiError('conflict', 'not enough', { requestedAtomic: 2_000_000n, legs: [{ amountAtomic: 10n ** 30n }] }).toBody();
  assert.equal(
    JSON.stringify(body),
    '{"error":{"code":"conflict","message":"not enough","details":{"requestedAtomic":"2000000","legs":[{"amountAtomic":"1000000000000000000000000000000"}]}}}',
  );
});

test('the CLI and error JSON writes a bigint as its decimal string, everything else as JSON.stringify does', () => {
  assert.equal(jsonText({ a: -7n, b: '1', c: [1, null], d: undefined }), '{"a":"-7","b":"1","c":[1,null]}');
});
