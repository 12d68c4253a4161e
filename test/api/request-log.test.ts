import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, uniqueUserId } from '../support/api-client';
import { getHarness } from '../support/harness';
import { newMerchant } from '../support/fixtures';
import { until } from '../support/until';
import { recordRequest, REQUEST_LOG_DAYS } from '../../src/domain/dashboard/request-log';
import { newId } from '../../src/domain/values/ids';

/** The app's request log rows, once `count` of them are written (the write is not awaited by the request). */
async function logged(appId: string, count: number): Promise<Array<{ method: string; path: string; status: number }>> {
  const h = await getHarness();
  return until(async (saw) => {
    const rows = await h.db.prisma.requestLogEntry.findMany({ where: { appId }, orderBy: { createdAt: 'asc' } });
    saw(rows.map((r) => `${r.method} ${r.path}`));
    return rows.length >= count ? rows : undefined;
  }, `${count} request log rows of ${appId}`);
}

describe("An app's request log", () => {
  test("keeps what the app's own credential asked, without its user's external id; a public route's caller writes nothing", async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const externalUserId = uniqueUserId();
    await call('/v2/accounts', { credential: m.cred, body: { externalUserId } });
    const byExternal = await call(`/v2/accounts/external/${externalUserId}`, { credential: m.cred });
    assert.equal(byExternal.status, 200, byExternal.text);
    const before = await logged(m.cred.appId, 2);
    // Anyone may call the app's public routes: not the app's requests.
    const open = await fetch(`${h.baseUrl}/v2/public/apps/${m.cred.appId}/payments/configuration`);
    assert.equal(open.status, 200);
    await call('/v2/partners/config', { credential: m.cred });
    const rows = await logged(m.cred.appId, before.length + 1);
    const paths = rows.map((r) => `${r.method} ${r.path} ${r.status}`);
    assert.ok(paths.includes('GET /v2/accounts/external/{externalUserId} 200'), paths.join('\n'));
    assert.ok(paths.includes('GET /v2/partners/config 200'), paths.join('\n'));
    assert.equal(paths.filter((p) => p.includes(externalUserId)).length, 0, 'the external id is in no row');
    assert.equal(paths.filter((p) => p.includes('/v2/public/')).length, 0, 'no public call is in the log');
  });

  test('rows older than the retention go as the log is written, not only when someone reads it', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const now = new Date(Date.now() + 3_600_000); // past any purge this process made in the last minute
    const old = await h.db.prisma.requestLogEntry.create({
      data: {
        id: newId('requestLogEntry'),
        appId: m.cred.appId,
        method: 'GET',
        path: '/v2/partners/config',
        status: 200,
        latencyMs: 1,
        requestId: 'req_old',
        createdAt: new Date(now.getTime() - (REQUEST_LOG_DAYS + 1) * 86_400_000),
      },
    });
    const entry = {
      appId: m.cred.appId,
      method: 'GET',
      path: '/v2/partners/config',
      status: 200,
      latencyMs: 1,
      idempotencyKey: null,
      requestId: 'req_new',
    };
    await recordRequest(h.db.prisma, entry, now);
    assert.equal(await h.db.prisma.requestLogEntry.count({ where: { id: old.id } }), 0, 'the old row is gone');
    assert.equal(await h.db.prisma.requestLogEntry.count({ where: { appId: m.cred.appId, requestId: 'req_new' } }), 1);
  });
});
