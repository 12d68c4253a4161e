import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020';
import { metadataJsonSchema } from '../../src/http/openapi/request-rules';
import { METADATA_LIMITS, ZMetadata } from '../../src/domain/values/metadata';

const documented = new Ajv2020({ strict: false }).compile(metadataJsonSchema());

// JSON values up to two levels deeper than metadata allows, of the sizes its limits name.
const text = fc.string({ maxLength: METADATA_LIMITS.stringChars + 2 }).filter((s) => !s.includes('\u0000'));
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text,
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(text, tie('value'), { maxKeys: 4 }),
  ),
}));
const metadata = fc.dictionary(text, value, { maxKeys: 4 }).filter((m) => Buffer.byteLength(JSON.stringify(m)) <= METADATA_LIMITS.bytes);

describe('the request rules the OpenAPI document states', () => {
  test("metadata's JSON Schema accepts exactly what the service accepts (within the byte limit, which no keyword states)", () => {
    fc.assert(
      fc.property(metadata, (m) => {
        const json = JSON.parse(JSON.stringify(m)) as unknown;
        assert.equal(documented(json), ZMetadata.safeParse(json).success, JSON.stringify(json));
      }),
      { numRuns: 500 },
    );
  });

  test('metadata nests objects or arrays at most three levels, the metadata object the first', () => {
    assert.equal(documented({ a: { b: { c: 1 } } }), true);
    assert.equal(documented({ a: [[1, 'x']] }), true);
    assert.equal(documented({ a: { b: { c: {} } } }), false);
    assert.equal(documented({ a: [[[]]] }), false);
  });

  test('metadata text holds no NUL, as a value or a key', () => {
    assert.equal(documented({ a: 'x\u0000' }), false);
    assert.equal(documented({ 'k\u0000': 'x' }), false);
    assert.equal(documented({ a: 'x' }), true);
  });
});
