import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, responseChecker } from '../support/api-client';
import { createPayment, getPayment, newMerchant } from '../support/fixtures';

describe('Payment recipientDisplay', () => {
  test('an account without a display profile: displayName is its payment handle, captured at creation and kept after a profile is set', async () => {
    const m = await newMerchant(undefined, { displayName: null });
    const bundle = await call(`/v2/accounts/${m.accountId}`, { credential: m.cred });
    assert.equal(bundle.status, 200, bundle.text);
    assert.equal(bundle.body.displayProfile.displayName, null);
    const handle = bundle.body.paymentHandle.handle as string;

    const first = await createPayment(m);
    assert.equal(first.status, 201, first.text);
    assert.deepEqual(first.body.payment.recipientDisplay, { displayName: handle, logoUrl: null });
    assert.ok(!JSON.stringify(first.body.payment.recipientDisplay).includes(bundle.body.account.externalUserId));

    const profile = await call(`/v2/accounts/${m.accountId}/display-profile`, {
      credential: m.cred,
      method: 'PUT',
      body: {
        displayName: 'Corner Bakery',
        logoUrl: 'https://cdn.example.com/bakery.png',
        expectedVersion: 0,
        reason: 'the shop has a name now',
      },
    });
    assert.equal(profile.status, 200, profile.text);
    const second = await createPayment(m);
    assert.equal(second.status, 201, second.text);
    assert.deepEqual(second.body.payment.recipientDisplay, { displayName: 'Corner Bakery', logoUrl: 'https://cdn.example.com/bakery.png' });
    // Captured at creation: the first Payment keeps what it was created with.
    assert.deepEqual((await getPayment(m, first.body.payment.id)).payment.recipientDisplay, { displayName: handle, logoUrl: null });
  });

  test('the response schema refuses a null displayName', async () => {
    const m = await newMerchant();
    const created = await createPayment(m);
    assert.equal(created.status, 201, created.text);
    const res = await call(`/v2/payments/${created.body.payment.id}`, { credential: m.cred });
    const body = structuredClone(res.body);
    body.payment.recipientDisplay.displayName = null;
    const checker = await responseChecker();
    assert.throws(() =>
      checker.check({
        method: 'GET',
        path: `/v2/payments/${created.body.payment.id}`,
        status: 200,
        headers: res.headers,
        body,
        text: JSON.stringify(body),
      }),
    );
  });
});
