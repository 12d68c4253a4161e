import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { verifyWebhook, WebhookVerificationError } from '../../src/webhooks/verify';

const SECRET = 'whsec_unitTestSecret0123456789abcdefghijklmnopq';
const NOW = Date.parse('2026-11-22T12:00:00Z');
const TS = Math.floor(NOW / 1000);

function signed(body: string, opts: { secret?: string; ts?: number; deliveryId?: string; eventId?: string } = {}) {
  const ts = opts.ts ?? TS;
  const deliveryId = opts.deliveryId ?? 'dlv_test1';
  const eventId = opts.eventId ?? 'evt_test1';
  const mac = createHmac('sha256', opts.secret ?? SECRET)
    .update(`${ts}.${deliveryId}.${eventId}.${body}`)
    .digest('hex');
  return {
    'x-svc-event': 'account.created',
    'x-svc-event-id': eventId,
    'x-svc-delivery': deliveryId,
    'x-svc-timestamp': String(ts),
    'x-svc-signature': `t=${ts},v1=${mac}`,
  } as Record<string, string>;
}

const BODY = JSON.stringify({
  id: 'evt_test1',
  name: 'account.created',
  apiVersion: '2026-09-09',
  createdAt: '2026-11-22T11:59:59.000Z',
  payload: { accountId: 'acct_1', externalUserId: 'ü ser' },
});

function rejectsWith(code: string, run: () => unknown) {
  assert.throws(run, (err: unknown) => {
    assert.ok(err instanceof WebhookVerificationError, String(err));
    assert.equal(err.code, code);
    return true;
  });
}

describe('verifyWebhook (consumer helper)', () => {
  test('accepts a valid signature over the raw bytes and returns the parsed envelope', () => {
    const envelope = verifyWebhook(Buffer.from(BODY, 'utf8'), signed(BODY), SECRET, { now: NOW });
    assert.deepEqual(envelope, JSON.parse(BODY));
    // Also from a string body and a fetch-style Headers object.
    assert.equal(verifyWebhook(BODY, new Headers(signed(BODY)), SECRET, { now: NOW }).id, 'evt_test1');
  });

  test('rejects a tampered body, even a whitespace change that parses to the same JSON', () => {
    const headers = signed(BODY);
    rejectsWith('signature_mismatch', () => verifyWebhook(BODY.replace('acct_1', 'acct_2'), headers, SECRET, { now: NOW }));
    rejectsWith('signature_mismatch', () => verifyWebhook(`${BODY} `, headers, SECRET, { now: NOW }));
  });

  test('rejects a signature made with another secret', () => {
    rejectsWith('signature_mismatch', () => verifyWebhook(BODY, signed(BODY, { secret: 'whsec_other' }), SECRET, { now: NOW }));
  });

  test('rejects a signature bound to another delivery id or event id', () => {
    const headers = { ...signed(BODY), 'x-svc-delivery': 'dlv_other' };
    rejectsWith('signature_mismatch', () => verifyWebhook(BODY, headers, SECRET, { now: NOW }));
  });

  test('rejects a timestamp outside the tolerance, in the past or the future', () => {
    rejectsWith('timestamp_out_of_tolerance', () => verifyWebhook(BODY, signed(BODY, { ts: TS - 301 }), SECRET, { now: NOW }));
    rejectsWith('timestamp_out_of_tolerance', () => verifyWebhook(BODY, signed(BODY, { ts: TS + 301 }), SECRET, { now: NOW }));
    rejectsWith('timestamp_out_of_tolerance', () =>
      verifyWebhook(BODY, signed(BODY, { ts: TS - 61 }), SECRET, { now: NOW, toleranceSeconds: 60 }),
    );
    assert.equal(verifyWebhook(BODY, signed(BODY, { ts: TS - 300 }), SECRET, { now: NOW }).id, 'evt_test1');
  });

  test('rejects missing headers, a malformed signature header and a timestamp that differs from x-svc-timestamp', () => {
    const headers = signed(BODY);
    rejectsWith('missing_header', () => verifyWebhook(BODY, { ...headers, 'x-svc-signature': undefined as never }, SECRET, { now: NOW }));
    rejectsWith('missing_header', () => verifyWebhook(BODY, { ...headers, 'x-svc-event-id': '' }, SECRET, { now: NOW }));
    rejectsWith('malformed_signature', () => verifyWebhook(BODY, { ...headers, 'x-svc-signature': 'v1=abc' }, SECRET, { now: NOW }));
    rejectsWith('malformed_signature', () => verifyWebhook(BODY, { ...headers, 'x-svc-timestamp': String(TS + 1) }, SECRET, { now: NOW }));
  });

  test('accepts when any one of several v1 signatures matches', () => {
    const headers = signed(BODY);
    headers['x-svc-signature'] = `t=${TS},v1=${'0'.repeat(64)},${headers['x-svc-signature']!.split(',')[1]}`;
    assert.equal(verifyWebhook(BODY, headers, SECRET, { now: NOW }).id, 'evt_test1');
  });

  test('rejects a correctly signed body that is not an envelope for the signed event id', () => {
    const other = JSON.stringify({ ...JSON.parse(BODY), id: 'evt_other' });
    rejectsWith('invalid_body', () => verifyWebhook(other, signed(other), SECRET, { now: NOW }));
    rejectsWith('invalid_body', () => verifyWebhook('not json', signed('not json'), SECRET, { now: NOW }));
  });
});
