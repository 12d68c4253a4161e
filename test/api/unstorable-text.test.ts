import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { unstorableText } from '../../src/domain/requests/validation';
import { call, newApp, uniqueUserId } from '../support/api-client';
import { getHarness } from '../support/harness';
import { createPayment, newMerchant } from '../support/fixtures';

const NUL = '\u0000';
const LONE = '\ud800';

function fieldsOf(res: { body: { error: { code: string; details: { fields: Array<{ field: string }> } } } }): string[] {
  assert.equal(res.body.error.code, 'bad_request');
  return res.body.error.details.fields.map((f) => f.field);
}

/** Text PostgreSQL or JSON can't store faithfully is a 400 naming the field, never a 500. */
describe('Text that cannot be stored', () => {
  test('a NUL or a lone surrogate in a body value, a metadata key or a query is 400 naming the field, and creates nothing', async () => {
    const cred = await newApp();
    const externalUserId = `${uniqueUserId('nul')}${NUL}`;
    const nul = await call('/v2/accounts', { credential: cred, body: { externalUserId } });
    assert.equal(nul.status, 400, nul.text);
    assert.deepEqual(fieldsOf(nul), ['body.externalUserId']);
    const h = await getHarness();
    assert.equal(await h.db.prisma.account.count({ where: { appId: cred.appId } }), 0);

    const key = await call('/v2/accounts', {
      credential: cred,
      body: { externalUserId: uniqueUserId('key'), metadata: { [`a${LONE}`]: 'x', ok: `b${LONE}` } },
    });
    assert.equal(key.status, 400, key.text);
    assert.deepEqual(fieldsOf(key), ['body.metadata.a\uFFFD', 'body.metadata.ok']);
    assert.equal(await h.db.prisma.account.count({ where: { appId: cred.appId } }), 0);

    const query = await call(`/v2/payments?externalReference=${encodeURIComponent(`r${NUL}`)}`, { credential: cred });
    assert.equal(query.status, 400, query.text);
    assert.deepEqual(fieldsOf(query), ['query.externalReference']);
  });

  test('a Payment with a NUL description is refused; a cancel with a NUL reason is 400 and the Payment can still be cancelled', async () => {
    const m = await newMerchant();
    const h = await getHarness();
    const refused = await createPayment(m, { description: `gift${NUL}` });
    assert.equal(refused.status, 400, refused.text);
    assert.deepEqual(fieldsOf(refused), ['body.description']);
    assert.equal(await h.db.prisma.payment.count({ where: { recipientAccountId: m.accountId } }), 0);

    const p = (await createPayment(m)).body.payment;
    const bad = await call(`/v2/payments/${p.id}/cancel`, { credential: m.cred, body: { reasonCode: 'other', reason: `no${NUL}` } });
    assert.equal(bad.status, 400, bad.text);
    assert.deepEqual(fieldsOf(bad), ['body.reason']);
    const ok = await call(`/v2/payments/${p.id}/cancel`, { credential: m.cred, body: { reasonCode: 'other', reason: 'changed mind' } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.payment.status, 'cancelled');
  });

  test('unstorableText names exactly the strings, at any depth, that hold a NUL or an unpaired surrogate', () => {
    const clean = fc.string({ unit: 'grapheme' }).filter((s) => !s.includes(NUL));
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        clean,
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(
          fc.string({ unit: 'grapheme', maxLength: 5 }).filter((k) => !k.includes(NUL) && k !== '__proto__'),
          tie('value'),
          { maxKeys: 4 },
        ),
      ),
    })).value;
    fc.assert(
      fc.property(json, (v) => {
        assert.deepEqual(unstorableText(v), []);
      }),
    );
    fc.assert(
      fc.property(
        clean,
        clean,
        fc.constantFrom(NUL, LONE, '\udc00', `x${LONE}y`),
        fc.integer({ min: 0, max: 3 }),
        (before, after, bad, depth) => {
          let v: unknown = `${before}${bad}${after}`;
          const path: string[] = [];
          for (let i = 0; i < depth; i += 1) {
            v = i % 2 === 0 ? { k: v, other: before } : [after, v];
            path.unshift(i % 2 === 0 ? 'k' : '1');
          }
          assert.deepEqual(unstorableText(v), [path]);
        },
      ),
    );
  });
});
