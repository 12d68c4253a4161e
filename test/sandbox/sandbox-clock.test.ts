import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { call, newApp } from '../support/api-client';
import { newPayer, payTo } from '../support/chain';
import { endsWithBooksChecked } from '../support/books';
import { createPayment, eventNames, getPayment, newMerchant, newVault, waitForPayment, type Merchant } from '../support/fixtures';
import { apiDepsOnHarness, getHarness } from '../support/harness';
import { createApi } from '../../src/http/app';
import { nominateForRecording } from '../support/record-histories';
import { requestCode, uniqueEmail } from '../vaults/support';
import { ZSandboxClockResponse } from '../../src/domain/sandbox/sandbox-clock.schemas';

let keys = 0;
const key = (what: string) => `clock-${what}-${process.pid}-${Date.now()}-${(keys += 1)}`;

function advance(m: Pick<Merchant, 'cred'>, path: string, body: unknown, idempotencyKey = key('move')) {
  return call(`/v2/sandbox/${path}/advance-clock`, { credential: m.cred, headers: { 'idempotency-key': idempotencyKey }, body });
}

/** A move that must succeed: its body is the documented shape. */
async function advanced(m: Pick<Merchant, 'cred'>, path: string, seconds: number, idempotencyKey?: string) {
  const res = await advance(m, path, { seconds }, idempotencyKey);
  assert.equal(res.status, 200, res.text);
  return ZSandboxClockResponse.parse(res.body).sandboxClock;
}

async function movesOf(resourceId: string) {
  const h = await getHarness();
  return h.db.prisma.sandboxClockMove.findMany({ where: { resourceId }, orderBy: { advancedSeconds: 'asc' } });
}

async function eventsOf(resourceId: string) {
  const h = await getHarness();
  return h.db.prisma.event.findMany({ where: { resourceId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
}

describe("Sandbox clock: a Payment's", () => {
  endsWithBooksChecked();

  test('a Payment expires one second after its clock is moved to a second before expiresAt, with the events of any expiry; late funds are then late', async () => {
    const m = await newMerchant();
    const p = (await createPayment(m, { expiresInSeconds: 600 })).body.payment;
    const untouched = (await createPayment(m, { expiresInSeconds: 600 })).body.payment;
    const seconds = Math.floor((Date.parse(p.expiresAt) - Date.now()) / 1000) - 1;
    const clock = await advanced(m, `payments/${p.id}`, seconds);
    assert.deepEqual(
      { resourceType: clock.resourceType, resourceId: clock.resourceId, seconds: clock.seconds, advancedSeconds: clock.advancedSeconds },
      { resourceType: 'payment', resourceId: p.id, seconds, advancedSeconds: seconds },
    );
    assert.equal(Date.parse(clock.clockTime) - Date.parse(clock.createdAt), seconds * 1000);

    const expired = await waitForPayment(m, p.id, 'expired by its own timer', (x) => x.status === 'expired', { mine: false });
    assert.equal(expired.statusVersion, 2);
    assert.equal(expired.expiresAt, p.expiresAt, 'expiresAt stays on the Payment clock');
    assert.deepEqual(await eventNames(p.id), ['payment.created', 'sandbox.clock_advanced', 'payment.expired']);
    const [, moved, expiry] = await eventsOf(p.id);
    // The timer, not the move, expired it: about a second of the workflow's own clock came in between.
    assert.ok(
      expiry!.createdAt.getTime() - moved!.createdAt.getTime() >= 500,
      `expired ${expiry!.createdAt.getTime() - moved!.createdAt.getTime()} ms after the move`,
    );
    assert.deepEqual(moved!.payload, {
      paymentId: p.id,
      accountId: m.accountId,
      moveId: clock.moveId,
      seconds,
      advancedSeconds: seconds,
      clockTime: clock.clockTime,
    });
    // The run its own timer expired: worth recording (the late funds below start another run).
    const h = await getHarness();
    const run = await h.env.client.workflow.getHandle(p.id).describe();
    nominateForRecording('payment--receive-expired-sandbox-clock', p.id, run.runId);
    // Only the moved Payment's clock moved.
    assert.equal((await getPayment(m, untouched.id)).payment.status, 'requires_payment_method');
    assert.deepEqual(await movesOf(untouched.id), []);

    const payer = await newPayer(10_000_000n);
    await payTo(payer, p.funding.depositAddress.address, 10_000_000n);
    const late = await waitForPayment(m, p.id, 'late funds recorded', (x) => x.incidentRecoverySummary.count === 1);
    assert.equal(late.status, 'expired');
    assert.deepEqual(await eventNames(p.id), ['payment.created', 'sandbox.clock_advanced', 'payment.expired', 'payment.late_received']);
  });

  test('moves add up; the identical retry answers the same move and moves nothing more; another body under the key is a conflict', async () => {
    const m = await newMerchant();
    const p = (await createPayment(m, { expiresInSeconds: 3600 })).body.payment;
    const retried = key('retry');
    const first = await advanced(m, `payments/${p.id}`, 60, retried);
    const again = await advance(m, `payments/${p.id}`, { seconds: 60 }, retried);
    assert.equal(again.status, 200, again.text);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.body.sandboxClock.moveId, first.moveId);
    const other = await advance(m, `payments/${p.id}`, { seconds: 61 }, retried);
    assert.equal(other.status, 409, other.text);
    assert.equal(other.body.error.code, 'idempotency_conflict');
    const second = await advanced(m, `payments/${p.id}`, 120);
    assert.equal(second.advancedSeconds, 180);
    assert.deepEqual(
      (await movesOf(p.id)).map((r) => [r.seconds, r.advancedSeconds]),
      [
        [60, 60],
        [120, 180],
      ],
    );
    assert.deepEqual(await eventNames(p.id), ['payment.created', 'sandbox.clock_advanced', 'sandbox.clock_advanced']);
    assert.equal((await getPayment(m, p.id)).payment.status, 'requires_payment_method', 'an hour less three minutes is left');
  });

  test('a move whose signal failed (a 5xx) is finished by the identical retry: the same move, told to the workflow, and the Payment expires on it', async () => {
    const m = await newMerchant();
    const p = (await createPayment(m, { expiresInSeconds: 600 })).body.payment;
    // The same service while Temporal is down: the move commits, its signal fails.
    const down = createApi(
      await apiDepsOnHarness({
        engine: {
          startPayment: async () => 'exists' as const,
          cancelPayment: async () => ({ outcome: 'closed' as const }),
          advancePaymentClock: async () => {
            throw new Error('Temporal is unavailable');
          },
          kickWebhookDispatcher: async () => undefined,
        },
      }),
    );
    const server = await new Promise<Server>((resolve) => {
      const s = down.listen(0, '127.0.0.1', () => resolve(s));
    });
    const retried = key('after-5xx');
    const seconds = Math.floor((Date.parse(p.expiresAt) - Date.now()) / 1000) - 1;
    try {
      const first = await call(`/v2/sandbox/payments/${p.id}/advance-clock`, {
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        credential: m.cred,
        headers: { 'idempotency-key': retried },
        body: { seconds },
      });
      assert.ok(first.status >= 500, first.text);
    } finally {
      server.close();
    }
    const [recorded] = await movesOf(p.id);
    assert.equal(recorded?.seconds, seconds, 'the move committed before the signal failed');
    const clock = await advanced(m, `payments/${p.id}`, seconds, retried);
    assert.equal(clock.moveId, recorded!.id);
    assert.equal((await movesOf(p.id)).length, 1, 'the retry moved nothing twice');
    await waitForPayment(m, p.id, 'expired on the retried move', (x) => x.status === 'expired', { mine: false });
  });

  test('refusals create nothing: production credentials 404, an ended Payment 409, a bad body 400, no key 400, another app 404', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = (await createPayment(m, { expiresInSeconds: 600 })).body.payment;

    const live = { cred: await newApp({ environment: 'production' }) };
    const liveNo = await advance(live, `payments/${p.id}`, { seconds: 10 });
    assert.equal(liveNo.status, 404, liveNo.text);
    assert.equal(liveNo.body.error.code, 'not_found');

    const stranger = await advance({ cred: await newApp() }, `payments/${p.id}`, { seconds: 10 });
    assert.equal(stranger.status, 404, stranger.text);

    const noKey = await call(`/v2/sandbox/payments/${p.id}/advance-clock`, { credential: m.cred, body: { seconds: 10 } });
    assert.equal(noKey.status, 400, noKey.text);

    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.record({ seconds: fc.oneof(fc.integer({ max: 0 }), fc.integer({ min: 2_592_001 }), fc.double({ noInteger: true })) }),
          fc.record({ seconds: fc.string() }),
          fc.record({ seconds: fc.integer({ min: 1, max: 10 }), extra: fc.constant('\u0000') }),
          fc.constant({}),
        ),
        async (body) => {
          const res = await advance(m, `payments/${p.id}`, body);
          assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
        },
      ),
      { numRuns: 15 },
    );

    const cancelled = await call(`/v2/payments/${p.id}/cancel`, { credential: m.cred, body: { reasonCode: 'customer_request' } });
    assert.equal(cancelled.status, 200, cancelled.text);
    const ended = await advance(m, `payments/${p.id}`, { seconds: 10 });
    assert.equal(ended.status, 409, ended.text);
    assert.equal(ended.body.error.code, 'payment_not_open');

    assert.deepEqual(await movesOf(p.id), []);
    assert.equal(await h.db.prisma.event.count({ where: { resourceId: p.id, name: 'sandbox.clock_advanced' } }), 0);
  });
});

describe("Sandbox clock: a vault policy approval's", () => {
  test("a code expires once the approval's clock passes its ten minutes, not before; each move is an event and an audit row", async () => {
    const h = await getHarness();
    const early = await newVault();
    const earlyCode = await requestCode(early.cred, early.accountId, uniqueEmail());
    await advanced(early, `accounts/${early.accountId}/vault/policy/approval`, 300);
    const ok = await call(`/v2/accounts/${early.accountId}/vault/policy/approval/verify`, {
      credential: early.cred,
      body: { code: earlyCode },
    });
    assert.equal(ok.status, 200, ok.text);

    const late = await newVault();
    const lateCode = await requestCode(late.cred, late.accountId, uniqueEmail());
    const clock = await advanced(late, `accounts/${late.accountId}/vault/policy/approval`, 600);
    assert.equal(clock.resourceType, 'vault_policy_approval');
    const lapsed = await call(`/v2/accounts/${late.accountId}/vault/policy/approval/verify`, {
      credential: late.cred,
      body: { code: lateCode },
    });
    assert.equal(lapsed.status, 409, lapsed.text);
    assert.equal(lapsed.body.error.code, 'approval_code_expired');

    const vaultId = late.vault.id as string;
    const events = (await eventsOf(vaultId)).filter((e) => e.name === 'sandbox.clock_advanced');
    assert.deepEqual(
      events.map((e) => e.payload),
      [
        {
          accountId: late.accountId,
          vaultId,
          policyId: clock.resourceId,
          moveId: clock.moveId,
          seconds: 600,
          advancedSeconds: 600,
          clockTime: clock.clockTime,
        },
      ],
    );
    const audit = await h.db.prisma.vaultAuditEvent.findMany({ where: { vaultId, eventType: 'vault.policy.approval_clock_advanced' } });
    assert.deepEqual(
      audit.map((a) => [a.policyId, a.actorType, a.payload]),
      [[clock.resourceId, 'partner_app', { moveId: clock.moveId, seconds: 600, advancedSeconds: 600 }]],
    );
  });

  test('no policy waiting for approval is 409 no_pending_policy; production credentials 404 before the vaults module answers 424', async () => {
    const v = await newVault();
    const none = await advance(v, `accounts/${v.accountId}/vault/policy/approval`, { seconds: 60 });
    assert.equal(none.status, 409, none.text);
    assert.equal(none.body.error.details.reasonCode, 'no_pending_policy');
    const live = await advance({ cred: await newApp({ environment: 'production' }) }, `accounts/${v.accountId}/vault/policy/approval`, {
      seconds: 60,
    });
    assert.equal(live.status, 404, live.text);
    const h = await getHarness();
    assert.equal(await h.db.prisma.sandboxClockMove.count({ where: { appId: v.cred.appId } }), 0);
  });
});
