import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createApi } from '../../src/http/app';
import { createLogger } from '../../src/logger';
import { appCredentialCache, type AppCredential } from '../../src/domain/apps/apps';
import { followCredentialChanges } from '../../src/runtime/credential-changes';
import { call, clientTokenFor, newApp, uniqueUserId } from '../support/api-client';
import { apiDepsOnHarness, getHarness } from '../support/harness';
import { cli, CliExit, runCli } from '../support/cli';
import { until } from '../support/until';
import { listenAdminApi } from '../support/bounded-api';
import { createTestOperator, type TestOperator } from '../support/operators';

/** One API process of several over the same database: its own credential cache, its own listener. */
interface ApiProcess {
  baseUrl: string;
  /** Its admin plane's listener. */
  adminBaseUrl: string;
  logs: string[];
  close(): Promise<void>;
}

async function startApiProcess(): Promise<ApiProcess> {
  const h = await getHarness();
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(chunk.toString('utf8'));
      cb();
    },
  });
  const logger = createLogger('debug', stream);
  const credentials = appCredentialCache(h.db.prisma, 10_000);
  const changes = followCredentialChanges({ url: h.databaseUrl, cache: credentials, logger });
  await changes.ready;
  const deps = await apiDepsOnHarness({ config: h.config, logger, credentials, client: { engine: h.engine } });
  const api = createApi(deps);
  const server: Server = await new Promise((resolve) => {
    const s = api.listen(0, '127.0.0.1', () => resolve(s));
  });
  const adminPlane = await listenAdminApi(deps);
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    adminBaseUrl: adminPlane.baseUrl,
    logs,
    async close() {
      await changes.stop();
      await adminPlane.close();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}

/** Admin operators, each with their own token: the audit names whichever acted. */
let ops: TestOperator;
let bob: TestOperator;

async function admin(api: ApiProcess, path: string, body: unknown, operator = ops) {
  return call(path, { baseUrl: api.adminBaseUrl, method: 'POST', body, headers: { authorization: `Bearer ${operator.token}` } });
}

const configStatus = async (api: ApiProcess, cred: AppCredential) =>
  (await call('/v2/partners/config', { baseUrl: api.baseUrl, credential: cred })).status;

/** Polls with a 1 s deadline: every API process must refuse the secret within a second of the change. */
async function refusedWithinOneSecond(api: ApiProcess, cred: AppCredential, what: string) {
  await until(
    async (saw) => {
      const status = await configStatus(api, cred);
      saw(status);
      return status === 401;
    },
    what,
    1_000,
  );
}

async function auditOf(appId: string) {
  const h = await getHarness();
  return h.db.prisma.operatorAction.findMany({ where: { targetType: 'app', targetId: appId }, orderBy: { createdAt: 'asc' } });
}

describe('rotating and revoking app credentials', () => {
  let a: ApiProcess;
  let b: ApiProcess;
  before(async () => {
    [a, b] = await Promise.all([startApiProcess(), startApiProcess()]);
    [ops, bob] = await Promise.all([createTestOperator('admin'), createTestOperator('admin')]);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  test('a revocation through one API process is refused by another within 1 s, client tokens included, and audited', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const account = await call('/v2/accounts', { baseUrl: b.baseUrl, credential: cred, body: { externalUserId: uniqueUserId('cred') } });
    assert.equal(account.status, 201, account.text);
    const token = await clientTokenFor(cred, account.body.account.id);
    // B has verified (and cached) the credential before the revocation.
    assert.equal(await configStatus(b, cred), 200);
    assert.equal(await configStatus(b, cred), 200);

    const revoked = await admin(a, `/admin/v1/apps/${cred.appId}/revocation`, { reason: 'leaked in a log' });
    assert.equal(revoked.status, 200, revoked.text);
    assert.equal(revoked.body.appId, cred.appId);
    await refusedWithinOneSecond(b, cred, 'API process B to refuse the revoked secret');
    assert.equal(await configStatus(a, cred), 401);
    const row = await h.db.prisma.app.findUniqueOrThrow({ where: { id: cred.appId } });
    assert.equal(row.revokedAt?.toISOString(), revoked.body.revokedAt);

    const me = await fetch(`${b.baseUrl}/v2/client/auth/exchange`, { method: 'POST' });
    assert.equal(me.status, 401);
    const tokenUse = await call(`/v2/client/me/payments/payment_0000000000000000000000`, {
      baseUrl: b.baseUrl,
      headers: { authorization: `Bearer ${token}`, 'x-svc-payment-secret': 'payment_0000000000000000000000_secret_x' },
    });
    assert.equal(tokenUse.status, 401, tokenUse.text);

    // Revoking again answers the first revocation; rotating a revoked app is refused.
    const again = await admin(a, `/admin/v1/apps/${cred.appId}/revocation`, {});
    assert.equal(again.body.revokedAt, revoked.body.revokedAt);
    const rotate = await admin(a, `/admin/v1/apps/${cred.appId}/secret-rotations`, {});
    assert.equal(rotate.status, 409, rotate.text);

    const audit = await auditOf(cred.appId);
    assert.deepEqual(
      audit.map((r) => [r.action, r.channel, r.actor, r.outcome]),
      [
        ['revoke', 'admin_api', ops.email, 'applied'],
        ['revoke', 'admin_api', ops.email, 'applied'],
        ['rotate-secret', 'admin_api', ops.email, 'refused'],
      ],
    );
    assert.equal(audit[0]?.reason, 'leaked in a log');
  });

  test('a rotation issues a new secret shown once; the old one works until its overlap ends, then every process refuses it within 1 s', async () => {
    const h = await getHarness();
    const first = await newApp();
    assert.equal(await configStatus(b, first), 200);

    const before = Date.now();
    const rotated = await cli([
      'apps',
      'rotate-secret',
      first.appId,
      '--actor',
      'alice@example.com',
      '--overlap-seconds',
      '3600',
      '--reason',
      'yearly rotation',
    ]);
    assert.deepEqual(Object.keys(rotated).sort(), ['appId', 'appSecret', 'environment', 'previousSecretsExpireAt']);
    assert.match(rotated.appSecret, /^sk_test_[A-Za-z0-9]{43}$/);
    const expires = Date.parse(rotated.previousSecretsExpireAt);
    assert.ok(expires >= before + 3_600_000 && expires <= Date.now() + 3_600_000, rotated.previousSecretsExpireAt);
    const second: AppCredential = { ...first, appSecret: rotated.appSecret };
    for (const api of [a, b]) {
      assert.equal(await configStatus(api, second), 200);
      assert.equal(await configStatus(api, first), 200, 'the previous secret works inside its overlap window');
    }

    // An overlap of 0 ends every previous secret now: a leaked secret is replaced at once.
    const third = await admin(a, `/admin/v1/apps/${first.appId}/secret-rotations`, { overlapSeconds: 0 }, bob);
    assert.equal(third.status, 201, third.text);
    assert.equal(third.headers.get('cache-control'), 'no-store');
    await refusedWithinOneSecond(b, first, 'API process B to refuse the first secret');
    await refusedWithinOneSecond(b, second, 'API process B to refuse the second secret');
    assert.equal(await configStatus(b, { ...first, appSecret: third.body.appSecret }), 200);

    // Stored hashed; neither the audit nor any log line holds a secret.
    const rows = await h.db.prisma.appSecret.findMany({ where: { appId: first.appId } });
    assert.equal(rows.length, 3);
    const audit = await auditOf(first.appId);
    assert.deepEqual(
      audit.map((r) => [r.action, r.channel, r.actor, r.outcome, r.reason]),
      [
        ['rotate-secret', 'cli', 'alice@example.com', 'created', 'yearly rotation'],
        ['rotate-secret', 'admin_api', bob.email, 'created', null],
      ],
    );
    const stored = JSON.stringify({ rows, audit });
    const logged = [...a.logs, ...b.logs].join('');
    for (const secret of [first.appSecret, second.appSecret, third.body.appSecret as string]) {
      assert.ok(!stored.includes(secret), 'a secret is stored in the clear');
      assert.ok(!logged.includes(secret), 'a secret is logged');
    }
  });

  test('the overlap is at most 7 days; bad input and unknown apps create nothing', async () => {
    const cred = await newApp();
    const tooLong = await admin(a, `/admin/v1/apps/${cred.appId}/secret-rotations`, { overlapSeconds: 7 * 24 * 3600 + 1 });
    assert.equal(tooLong.status, 400, tooLong.text);
    // The actor is the token's operator: a typed one is refused, not recorded.
    const typedActor = await admin(a, `/admin/v1/apps/${cred.appId}/revocation`, { actor: 'someone-else@example.com' });
    assert.equal(typedActor.status, 400, typedActor.text);
    assert.equal(typedActor.body.error.details[0].field, 'body.actor');
    const viewer = await admin(a, `/admin/v1/apps/${cred.appId}/revocation`, {}, await createTestOperator('viewer'));
    assert.equal(viewer.status, 403, 'a viewer reads, never revokes');
    const unauthorized = await call(`/admin/v1/apps/${cred.appId}/revocation`, { baseUrl: a.adminBaseUrl, method: 'POST', body: {} });
    assert.equal(unauthorized.status, 401);
    const onPartnerPort = await call(`/admin/v1/apps/${cred.appId}/revocation`, {
      baseUrl: a.baseUrl,
      method: 'POST',
      body: {},
      headers: { authorization: `Bearer ${ops.token}` },
    });
    assert.equal(onPartnerPort.status, 404, 'the partner port serves no admin API');
    // Another spelling of the path is another path: it never reaches a handler past the authentication.
    for (const shouted of [`/ADMIN/V1/APPS/${cred.appId}/REVOCATION`, `/Admin/v1/apps/${cred.appId}/revocation`]) {
      const res = await call(shouted, { baseUrl: a.adminBaseUrl, method: 'POST', body: {} });
      assert.equal(res.status, 404, `${shouted}: ${res.text}`);
    }
    const h = await getHarness();
    assert.equal(await h.db.prisma.appSecret.count({ where: { appId: cred.appId } }), 1);
    assert.equal((await h.db.prisma.app.findUniqueOrThrow({ where: { id: cred.appId } })).revokedAt, null);
    assert.deepEqual(await auditOf(cred.appId), []);
    assert.equal(await configStatus(a, cred), 200);

    const unknown = await admin(a, '/admin/v1/apps/app_doesnotexist0000000000/revocation', {});
    assert.equal(unknown.status, 404, unknown.text);

    await assert.rejects(runCli(['apps', 'revoke', cred.appId]), (err: CliExit) => err.code === 2);
    await assert.rejects(
      runCli(['apps', 'rotate-secret', cred.appId, '--actor', 'ops', '--overlap-seconds', 'soon']),
      (err: CliExit) => err.code === 2,
    );
    const revoked = await cli(['apps', 'revoke', cred.appId, '--actor', 'carol@example.com']);
    assert.equal(revoked.appId, cred.appId);
    await refusedWithinOneSecond(a, cred, 'API process A to refuse the secret revoked through the CLI');
  });
});
