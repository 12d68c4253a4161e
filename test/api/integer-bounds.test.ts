import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { call, harnessOpenApi, newApp, responseChecker } from '../support/api-client';
import { newMerchant, type Merchant } from '../support/fixtures';

type Json = Record<string, any>;

/** PostgreSQL's INTEGER (int4) holds -2147483648..2147483647. */
const INT4_MAX = 2_147_483_647;

/** An integer a request may carry: where it goes (body.a.0.b or query.limit) and its documented bounds. */
interface IntegerField {
  method: string;
  path: string;
  at: string[];
  minimum?: number;
  maximum?: number;
}

/** Every integer of every request body and parameter the document describes, found by walking its schemas. */
function integerFields(doc: Json): IntegerField[] {
  const deref = (s: Json): Json => (s?.$ref ? deref(doc.components[s.$ref.split('/')[2]][s.$ref.split('/')[3]]) : s);
  const found: IntegerField[] = [];
  const walk = (schema: Json, at: string[], into: (at: string[], s: Json) => void) => {
    const s = deref(schema);
    if (!s || typeof s !== 'object') return;
    if (s.type === 'integer') into(at, s);
    for (const [name, child] of Object.entries((s.properties ?? {}) as Json)) walk(child, [...at, name], into);
    if (s.items) walk(s.items, [...at, '0'], into);
    for (const key of ['oneOf', 'anyOf', 'allOf']) for (const child of s[key] ?? []) walk(child, at, into);
  };
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      const into = (at: string[], s: Json) =>
        found.push({
          method: method.toUpperCase(),
          path,
          at,
          minimum: s.minimum ?? (s.exclusiveMinimum === undefined ? undefined : s.exclusiveMinimum + 1),
          maximum: s.maximum,
        });
      const body = op.requestBody?.content?.['application/json']?.schema;
      if (body) walk(body, ['body'], into);
      for (const p of (op.parameters ?? []) as Json[]) walk(deref(p).schema, [deref(p).in, deref(p).name], into);
    }
  }
  return found;
}

function setAt(target: Json, at: string[], value: unknown): void {
  let o = target;
  for (const key of at.slice(0, -1)) o = o[key] ??= {};
  o[at[at.length - 1]!] = value;
}

/** Past what a PostgreSQL INTEGER holds, either way (int4 is -2147483648..2147483647). */
const outOfInt4 = fc.oneof(
  fc.constantFrom(INT4_MAX + 1, 22_794_032_703_003, Number.MAX_SAFE_INTEGER, -INT4_MAX - 2, Number.MIN_SAFE_INTEGER),
  fc.integer({ min: INT4_MAX + 1, max: Number.MAX_SAFE_INTEGER }),
  fc.integer({ min: Number.MIN_SAFE_INTEGER, max: -INT4_MAX - 2 }),
);

describe('Integers in requests fit the INTEGER columns that store them', () => {
  let merchant: Merchant;
  let fields: IntegerField[];
  let doc: Json;

  /** The operation's documented request example with `value` at the field, sent as the merchant. */
  async function send(f: IntegerField, value: number, idempotencyKey: string) {
    const op = (await responseChecker()).operationFor(f.method, f.path.replace(/\{\w+\}/g, 'x1'))!.operation as Json;
    // Ids of the right shape that name nothing: the body is read before the vault or Payment is.
    const route = f.path
      .replace('{accountId}', merchant.accountId)
      .replace('{appId}', merchant.cred.appId)
      .replace('{vaultId}', 'vault_AAAAAAAAAAAAAAAAAAAAAA')
      .replace('{paymentId}', 'payment_AAAAAAAAAAAAAAAAAAAAAA');
    const takesKey = ((op.parameters ?? []) as Json[]).some((p) => /IdempotencyKey/.test(p.$ref ?? '') || p.name === 'Idempotency-Key');
    const example = op.requestBody?.content['application/json'].examples.default.value;
    const body = example === undefined ? undefined : structuredClone(example);
    const query = new URLSearchParams();
    if (f.at[0] === 'body') setAt(body, f.at.slice(1), value);
    else query.set(f.at[1]!, String(value));
    return call(`${route}${f.at[0] === 'query' ? `?${query}` : ''}`, {
      method: f.method,
      ...(body === undefined ? {} : { body }),
      credential: f.path.startsWith('/v2/public/') ? null : merchant.cred,
      headers: takesKey ? { 'idempotency-key': idempotencyKey } : {},
    });
  }

  before(async () => {
    doc = (await harnessOpenApi()) as Json;
    fields = integerFields(doc);
    merchant = await newMerchant(await newApp());
  });

  test('the document bounds every request integer within int4', () => {
    assert.ok(fields.length >= 15, `only ${fields.length} integer fields found`);
    for (const f of fields) {
      const name = `${f.method} ${f.path} ${f.at.join('.')}`;
      assert.ok(f.maximum !== undefined && f.maximum <= INT4_MAX, `${name}: maximum ${f.maximum}`);
      assert.ok(f.minimum !== undefined && f.minimum >= -INT4_MAX - 1, `${name}: minimum ${f.minimum}`);
    }
  });

  test('the largest int4 a field documents is accepted as a value: never a 500 (a version one past it is never written)', async () => {
    for (const f of fields.filter((x) => x.maximum === INT4_MAX)) {
      const res = await send(f, INT4_MAX, `int4-max-${process.pid}-${f.at.join('.')}-${f.path}`);
      const name = `${f.method} ${f.path} ${f.at.join('.')}=${INT4_MAX}`;
      assert.ok(res.status < 500, `${name}: ${res.status} ${res.text.slice(0, 300)}`);
      assert.ok(
        !(res.body.error?.details?.fields ?? []).some((x: { field: string }) => x.field === f.at.join('.')),
        `${name}: ${res.text.slice(0, 300)}`,
      );
    }
  });

  test('an integer out of int4 in any request field is 400 naming the field, never 500', async () => {
    let key = 0;
    for (const f of fields) {
      await fc.assert(
        fc.asyncProperty(outOfInt4, async (value) => {
          const res = await send(f, value, `int4-bounds-${process.pid}-${(key += 1)}`);
          const name = `${f.method} ${f.path} ${f.at.join('.')}=${value}`;
          assert.equal(res.status, 400, `${name}: ${res.status} ${res.text.slice(0, 300)}`);
          assert.ok(
            (res.body.error.details?.fields ?? []).some((x: { field: string }) => x.field === f.at.join('.')),
            `${name}: ${res.text.slice(0, 300)}`,
          );
        }),
        { numRuns: 4 },
      );
    }
  });
});
