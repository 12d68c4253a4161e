import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Scope } from '../../src/domain/apps/apps';
import { EVENT_NAMES } from '../../src/domain/event-log/event-catalog';
import { ZPartnerConfig } from '../../src/domain/apps/partner-config.schemas';
import type { ApiDeps } from '../../src/http/app';
import { call, newApp, responseChecker, uniqueUserId } from '../support/api-client';
import { listenApi } from '../support/bounded-api';
import { sandboxWithout } from '../support/environments';
import { apiDepsOnHarness, getHarness, TEST_SERVICE_SECRET } from '../support/harness';
import { requestSignInCode } from '../../src/domain/dashboard/sign-in';
import { invitePartnerUser } from '../../src/domain/dashboard/partner-users';
import { startAdminApi } from '../webhooks/support/admin';

test('GET /v2/partners/config returns the full configuration for the credential', async () => {
  const cred = await newApp({ scopes: ['v2:accounts', 'v2:payments'] });
  const res = await call('/v2/partners/config', { credential: cred });
  assert.equal(res.status, 200);
  const c = res.body;
  ZPartnerConfig.parse(c);
  for (const key of [
    'id',
    'appId',
    'organizationId',
    'environmentId',
    'apiVersion',
    'supportedApiVersions',
    'namespace',
    'scopes',
    'credentialType',
    'credentialMode',
    'status',
    'modules',
    'compliance',
    'fees',
    'networks',
    'capabilities',
    'integrations',
    'links',
  ]) {
    assert.ok(key in c, `missing ${key}`);
  }
  assert.equal(c.appId, cred.appId);
  assert.equal(c.apiVersion, '2026-09-09');
  assert.deepEqual(c.supportedApiVersions, ['2026-09-09']);
  assert.deepEqual(c.scopes, ['v2:accounts', 'v2:payments']);
  assert.equal(c.credentialMode, 'app_secret');
  assert.equal(c.fees.model, 'deducted_at_final_settlement');
  assert.equal(c.fees.totalFeeBps, c.fees.partnerFeeBps + c.fees.platformFeeBps);

  const deposits = c.modules.find((m: { id: string }) => m.id === 'deposit_addresses');
  assert.equal(deposits.credentialAllowed, false);
  assert.equal(deposits.available, false);
  assert.equal(deposits.disabledReason, 'credential_scope_missing');

  const network = c.networks[0];
  assert.equal(network.chainId, 31337);
  assert.deepEqual(network.supportedAssets[0].minimumDeposit, { amount: '1', amountAtomic: '1000000', inclusive: true });
  assert.equal(network.supportedAssets[0].decimals, 6);

  const hooks = c.capabilities.webhooks;
  assert.deepEqual([...hooks.supportedEvents].sort(), [...EVENT_NAMES].sort());
  // The spec's 47, and sandbox.clock_advanced (docs/decisions/sandbox-clock.md).
  assert.equal(hooks.supportedEvents.length, 48);
  assert.ok(!hooks.recommendedEvents.includes('sandbox.clock_advanced'));
  assert.ok(!hooks.recommendedEvents.includes('payment.created'));
  assert.ok(!hooks.recommendedEvents.includes('kyc.updated'));
  assert.ok(!hooks.recommendedEvents.includes('vault.failed'));
  assert.ok(hooks.recommendedEvents.includes('payment.succeeded'));
  assert.ok(hooks.recommendedEvents.includes('deposit.settled'));
  assert.ok(!hooks.recommendedEvents.includes('deposit.failed'));
  assert.deepEqual(hooks.deliveryPolicy, {
    guarantee: 'at_least_once',
    retryableStatuses: [408, 425, 429, 500, 502, 503, 504],
    maxAttempts: 3,
    // The harness allows local receivers (its delivery tests); the production default is the spec's false.
    localPrivateDestinationsAllowed: true,
  });
});

test('a production credential sees its own environment: the harness runs it on two chains (8453 and 1), not the sandbox chain', async () => {
  const cred = await newApp({ environment: 'production' });
  const res = await call('/v2/partners/config', { credential: cred });
  assert.equal(res.status, 200);
  assert.equal(res.body.environmentId, 'env_production');
  assert.deepEqual(
    res.body.networks.map((n: { chainId: number }) => n.chainId),
    [8453, 1],
  );
});

/** The six availability flags of every capability group (spec: Partner configuration). */
const FLAGS = ['entitled', 'credentialAllowed', 'operational', 'available', 'disabledReason', 'availableToCredential'] as const;
/** modules[] entries: the spec lists five of them (no availableToCredential). */
const MODULE_FLAGS = FLAGS.filter((f) => f !== 'availableToCredential');

/** Every object of the config that carries availability flags (it has `entitled`), by its path. */
function flagGroups(value: unknown, path = ''): Array<{ path: string; group: Record<string, unknown> }> {
  if (Array.isArray(value)) return value.flatMap((v, i) => flagGroups(v, `${path}[${i}]`));
  if (!value || typeof value !== 'object') return [];
  const own = 'entitled' in value ? [{ path, group: value as Record<string, unknown> }] : [];
  return [...own, ...Object.entries(value).flatMap(([k, v]) => flagGroups(v, path ? `${path}.${k}` : k))];
}

/** The real app with the harness's parts and every optional surface, plus the overrides given. */
async function startApi(overrides: Partial<ApiDeps> = {}) {
  const h = await getHarness();
  return listenApi(
    await apiDepsOnHarness({ engine: h.engine, chains: h.chain.chains, client: { engine: h.engine }, returns: h.engine, ...overrides }),
  );
}

describe('availability flags', () => {
  test('every availability-flags group of the config carries exactly the six flags; modules[] the five the spec lists', async () => {
    for (const scopes of [undefined, ['v2:accounts'] as Scope[]]) {
      const cred = await newApp(scopes ? { scopes } : {});
      const res = await call('/v2/partners/config', { credential: cred });
      assert.equal(res.status, 200, res.text);
      const groups = flagGroups(res.body);
      assert.deepEqual(
        groups.map((g) => g.path).filter((p) => !p.startsWith('modules[')),
        [
          'capabilities.accounts',
          'capabilities.depositAddresses',
          'capabilities.payments',
          'capabilities.payments.methods.direct',
          'capabilities.payments.methods.routing',
          'capabilities.payments.methods.onramp',
          'capabilities.payments.methods.externalQr',
          'capabilities.payments.methods.externalBank',
          'capabilities.payments.methods.card',
          'capabilities.vaults',
        ],
      );
      for (const { path, group } of groups) {
        const expected: readonly string[] = path.startsWith('modules[') ? MODULE_FLAGS : FLAGS;
        assert.deepEqual(
          Object.keys(group)
            .filter((k) => (FLAGS as readonly string[]).includes(k))
            .sort(),
          [...expected].sort(),
          path,
        );
        for (const f of expected) {
          if (f === 'disabledReason') assert.ok(group[f] === null || typeof group[f] === 'string', `${path}.${f}`);
          else assert.equal(typeof group[f], 'boolean', `${path}.${f}`);
        }
        assert.equal(group.available, group.entitled && group.credentialAllowed && group.operational, path);
        if ('availableToCredential' in group) assert.equal(group.availableToCredential, group.available, path);
        assert.equal(group.disabledReason === null, group.available, path);
      }
    }
  });

  test('a flag missing from a group (or one too many) fails the schema and the OpenAPI response check', async () => {
    const cred = await newApp();
    const res = await call('/v2/partners/config', { credential: cred });
    const checker = await responseChecker();
    const check = (body: unknown) =>
      checker.check({ method: 'GET', path: '/v2/partners/config', status: 200, headers: res.headers, body, text: JSON.stringify(body) });
    check(res.body);
    const missing = structuredClone(res.body);
    delete missing.capabilities.payments.methods.direct.availableToCredential;
    assert.equal(ZPartnerConfig.safeParse(missing).success, false);
    assert.throws(() => check(missing));
    const extra = structuredClone(res.body);
    extra.capabilities.payments.methods.card.surprise = true;
    assert.equal(ZPartnerConfig.safeParse(extra).success, false);
    assert.throws(() => check(extra));
  });
});

describe('integrations and capabilities agree with what the routes do', () => {
  test('clientApi is enabled where the client API answers: the token exchange works, and needs v2:payments', async () => {
    const cred = await newApp();
    const config = await call('/v2/partners/config', { credential: cred });
    assert.deepEqual(config.body.integrations.clientApi, { enabled: true, availableToCredential: true });
    const account = await call('/v2/accounts', { credential: cred, body: { externalUserId: uniqueUserId('cfg-client') } });
    assert.equal(account.status, 201, account.text);
    const exchanged = await call('/v2/client/auth/exchange', { credential: cred, body: { accountId: account.body.account.id } });
    assert.equal(exchanged.status, 200, exchanged.text);

    const noPayments = await newApp({ scopes: ['v2:accounts'] });
    const limited = await call('/v2/partners/config', { credential: noPayments });
    assert.deepEqual(limited.body.integrations.clientApi, { enabled: true, availableToCredential: false });
    const refused = await call('/v2/client/auth/exchange', { credential: noPayments, body: { accountId: account.body.account.id } });
    assert.equal(refused.status, 403, refused.text);
    assert.deepEqual(config.body.integrations.partnerConsole, { enabled: true, availableToCredential: true });
  });

  test('partnerConsole is on only where a partner user can sign in: SMTP, or the sandbox outbox; links.dashboard follows it', async () => {
    const h = await getHarness();
    const sandbox = await newApp();
    const production = await newApp({ environment: 'production' });
    const dashboardOf = async (cred: typeof sandbox, baseUrl?: string) => {
      const config = await call('/v2/partners/config', { credential: cred, ...(baseUrl ? { baseUrl } : {}) });
      assert.equal(config.status, 200, config.text);
      return [config.body.integrations.partnerConsole.enabled, config.body.links.dashboard];
    };
    // With SMTP (the harness's mailbox) every app's people get their codes.
    assert.deepEqual(await dashboardOf(production), [true, '/dashboard']);
    const api = await startApi({ mailer: null });
    try {
      assert.deepEqual(await dashboardOf(sandbox, api.baseUrl), [true, '/dashboard']);
      assert.deepEqual(await dashboardOf(production, api.baseUrl), [false, null]);
    } finally {
      await api.close();
    }
    // What the flag says is what sign-in does: without SMTP, a production app's member gets no code.
    const email = `console-${uniqueUserId('flag')}@partner.example`;
    await invitePartnerUser(h.db.prisma, production.appId, { email, role: 'developer', actor: 'test' });
    const request = await requestSignInCode({ prisma: h.db.prisma, serviceSecret: TEST_SERVICE_SECRET, mailer: null }, email);
    assert.equal(request.outcome, 'no_mail');
  });

  test('an API built without the client API reports clientApi off, and has no token exchange', async () => {
    const api = await startApi({ client: undefined });
    try {
      const cred = await newApp();
      const config = await call('/v2/partners/config', { credential: cred, baseUrl: api.baseUrl });
      assert.deepEqual(config.body.integrations.clientApi, { enabled: false, availableToCredential: false });
      const res = await call('/v2/client/auth/exchange', { credential: cred, baseUrl: api.baseUrl, body: { accountId: 'acct_nothing' } });
      assert.equal(res.status, 404, res.text);
    } finally {
      await api.close();
    }
  });

  test('payments and webhooks modules off: clientApi, webhooks and the payment capabilities are off, and the exchange answers 424', async () => {
    const h = await getHarness();
    const api = await startApi({ environments: sandboxWithout(h.environments, 'payments', 'webhooks') });
    try {
      const cred = await newApp();
      const config = await call('/v2/partners/config', { credential: cred, baseUrl: api.baseUrl });
      assert.deepEqual(config.body.integrations, {
        clientApi: { enabled: false, availableToCredential: false },
        webhooks: { enabled: false, availableToCredential: false },
        partnerConsole: { enabled: true, availableToCredential: true },
      });
      assert.deepEqual(config.body.capabilities.payments.capabilities, {
        crypto: false,
        onramp: false,
        externalQr: false,
        externalBank: false,
        card: false,
      });
      assert.equal(config.body.capabilities.payments.methods.direct.available, false);
      const res = await call('/v2/client/auth/exchange', { credential: cred, baseUrl: api.baseUrl, body: { accountId: 'acct_nothing' } });
      assert.equal(res.status, 424, res.text);
      assert.equal(res.body.error.details.module, 'payments');
    } finally {
      await api.close();
    }
  });
});

describe("webhook delivery policy: the deployment's real setting", () => {
  test('the harness API allows private destinations and says so; an API with them off says false', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const on = await call('/v2/partners/config', { credential: cred });
    assert.equal(h.config.webhooks.allowPrivateDestinations, true);
    assert.equal(on.body.capabilities.webhooks.deliveryPolicy.localPrivateDestinationsAllowed, true);
    const api = await startApi({ config: { ...h.config, webhooks: { allowPrivateDestinations: false } } });
    try {
      const off = await call('/v2/partners/config', { credential: cred, baseUrl: api.baseUrl });
      assert.equal(off.body.capabilities.webhooks.deliveryPolicy.localPrivateDestinationsAllowed, false);
    } finally {
      await api.close();
    }
  });

  test('endpoint creation on the admin API follows the same setting the config reports', async () => {
    for (const allowPrivate of [true, false]) {
      const admin = await startAdminApi({ allowPrivate });
      try {
        const cred = await newApp();
        const config = await call('/v2/partners/config', { credential: cred, baseUrl: admin.baseUrl });
        assert.equal(config.body.capabilities.webhooks.deliveryPolicy.localPrivateDestinationsAllowed, allowPrivate);
        const created = await admin.call('POST', `/admin/v1/apps/${cred.appId}/webhook-endpoints`, { url: 'https://127.0.0.1:9/hooks' });
        assert.equal(created.status, allowPrivate ? 201 : 422, JSON.stringify(created.body));
        if (!allowPrivate) assert.equal(created.body.error.code, 'webhook_destination_not_allowed');
      } finally {
        await admin.close();
      }
    }
  });
});
