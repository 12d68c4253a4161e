import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { ModuleId } from '../../src/config/environments';
import { MODULE_IDS } from '../../src/config/environments';
import type { AppCredential } from '../../src/domain/apps/apps';
import { createApi, type ApiDeps } from '../../src/http/app';
import { call, newApp, uniqueUserId } from '../support/api-client';
import { sandboxWithout } from '../support/environments';
import { apiDepsOnHarness, getHarness } from '../support/harness';
import { listRoutes, type RouteKey } from './fuzz/routes';

/**
 * Every /v2 route and the modules it belongs to (docs/decisions/api-conventions.md "Module availability"). null: the
 * route is no module's (the config itself; the provider's signed callbacks). A route missing here
 * fails the first test: a new route must say which module it is.
 */
const ROUTE_MODULES: Record<RouteKey, readonly ModuleId[] | null> = {
  'GET /v2/partners/config': null,
  'GET /v2/idempotency-keys/:key': null,
  'POST /v2/providers/:providerCode/callbacks': null,
  'POST /v2/client/auth/exchange': ['payments'],
  'POST /v2/client/auth/revoke': ['payments'],
  'GET /v2/client/me/payments/:paymentId': ['payments'],
  'POST /v2/client/me/payments/:paymentId/confirm': ['payments'],
  'POST /v2/client/me/payments/:paymentId/options/:optionId/authorize': ['payments', 'vaults'],
  'POST /v2/accounts': ['accounts'],
  'GET /v2/accounts/external/:externalUserId': ['accounts'],
  'GET /v2/accounts/:accountId': ['accounts'],
  'GET /v2/accounts/:accountId/capabilities': ['accounts'],
  'PUT /v2/accounts/:accountId/display-profile': ['accounts'],
  'POST /v2/accounts/:accountId/connected-wallets': ['accounts'],
  'PUT /v2/accounts/:accountId/settlement-profile': ['accounts'],
  'GET /v2/accounts/:accountId/transactions': ['balances_and_transactions'],
  'GET /v2/accounts/:accountId/transactions/:transactionId': ['balances_and_transactions'],
  'GET /v2/accounts/:accountId/balances': ['balances_and_transactions'],
  'POST /v2/payments': ['payments'],
  'GET /v2/payments': ['payments'],
  'GET /v2/payments/:paymentId': ['payments'],
  'POST /v2/payments/:paymentId/cancel': ['payments'],
  'POST /v2/payments/:paymentId/refunds': ['payments'],
  'GET /v2/payments/:paymentId/refunds': ['payments'],
  'POST /v2/payments/:paymentId/incident-recoveries': ['payments'],
  'GET /v2/payments/:paymentId/incident-recoveries': ['payments'],
  'GET /v2/payments/:paymentId/incidents': ['payments'],
  'POST /v2/accounts/:accountId/deposit-addresses': ['deposit_addresses'],
  'GET /v2/accounts/:accountId/deposit-addresses': ['deposit_addresses'],
  'GET /v2/accounts/:accountId/deposit-addresses/:depositAddressId': ['deposit_addresses'],
  'GET /v2/accounts/:accountId/deposits': ['deposit_addresses'],
  'GET /v2/accounts/:accountId/deposits/:depositId': ['deposit_addresses'],
  'POST /v2/accounts/:accountId/vault': ['vaults'],
  'GET /v2/accounts/:accountId/vault': ['vaults'],
  'PUT /v2/accounts/:accountId/vault/policy': ['vaults'],
  'POST /v2/accounts/:accountId/vault/policy/approval': ['vaults'],
  'POST /v2/accounts/:accountId/vault/policy/approval/verify': ['vaults'],
  'GET /v2/accounts/:accountId/vault/audit-events': ['vaults'],
  'POST /v2/vaults/:vaultId/policy/evaluate': ['vaults'],
  'POST /v2/sandbox/payments/:paymentId/advance-clock': ['payments'],
  'POST /v2/sandbox/accounts/:accountId/vault/policy/approval/advance-clock': ['vaults'],
  'GET /v2/accounts/:accountId/bank-account-requirements': ['bank_accounts'],
  'POST /v2/accounts/:accountId/bank-accounts': ['bank_accounts'],
  'GET /v2/accounts/:accountId/bank-accounts': ['bank_accounts'],
  'GET /v2/accounts/:accountId/bank-accounts/:bankAccountId': ['bank_accounts'],
  'POST /v2/accounts/:accountId/bank-accounts/:bankAccountId/disable': ['bank_accounts'],
  'GET /v2/payments/external-bank/banks': ['bank_accounts'],
  'PUT /v2/accounts/:accountId/payment-acceptance': ['accounts'],
  'GET /v2/openapi/partners.json': null,
  // The event log is every module's: a credential reads the resource types its scopes read.
  'GET /v2/events': null,
  'GET /v2/events/:eventId': null,
  // No credential: public creation answers 424 by its own configuration, which folds in the payments
  // module (test/public-payments covers it); here they are called for an app that doesn't exist.
  'GET /v2/public/apps/:appId/payments/configuration': null,
  'POST /v2/public/apps/:appId/payments': null,
};

/**
 * Routes of a module that answer, rather than refuse, while it is off: the bank account requirements
 * list every country as unavailable with the module's reason (spec: every country not offered returns
 * available false), in a 200. Each is checked for that answer below.
 */
const ANSWER_WHILE_OFF: Partial<Record<RouteKey, ModuleId>> = {
  'GET /v2/accounts/:accountId/bank-account-requirements': 'bank_accounts',
};

/** The requirements answer of a module that is off: every country unavailable, the linked ones for the module's reason. */
function assertAllCountriesUnavailable(res: { status: number; text: string; body: any }, reason: string) {
  assert.equal(res.status, 200, res.text);
  const countries = res.body.countries as Array<{ country: string; available: boolean; unavailableReason: string }>;
  assert.ok(countries.length > 0);
  for (const c of countries) {
    assert.equal(c.available, false, c.country);
    assert.ok([reason, 'country_not_supported'].includes(c.unavailableReason), `${c.country}: ${c.unavailableReason}`);
  }
  assert.ok(countries.some((c) => c.unavailableReason === reason));
}

/** A value for each path parameter: the app's real account, and well-formed ids of nothing. */
function fill(path: string, accountId: string): string {
  const values: Record<string, string> = {
    accountId,
    externalUserId: 'nobody',
    transactionId: 'txn_nothing',
    paymentId: 'payment_nothing',
    depositAddressId: 'deposit_addr_nothing',
    depositId: 'deposit_nothing',
    bankAccountId: 'bank_account_nothing',
    optionId: 'pay_option_nothing',
    providerCode: 'sandbox',
    appId: 'app_nothing',
    eventId: 'evt_nothing',
    vaultId: 'vault_nothing',
    key: 'key-of-nothing',
  };
  return path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const value = values[name];
    if (!value) throw new Error(`no test value for :${name}`);
    return value;
  });
}

interface Running {
  baseUrl: string;
  routes: RouteKey[];
  close(): Promise<void>;
}

async function start(overrides: Partial<ApiDeps>): Promise<Running> {
  const h = await getHarness();
  const app = createApi(
    await apiDepsOnHarness({ engine: h.engine, chains: h.chain.chains, client: { engine: h.engine }, returns: h.engine, ...overrides }),
  );
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    routes: listRoutes(app).filter((r) => r.split(' ')[1]!.startsWith('/v2/')),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('Module availability: the config and the routes agree', () => {
  let cred: AppCredential;
  let accountId: string;
  let token: string;
  let full: Running;

  before(async () => {
    cred = await newApp();
    const created = await call('/v2/accounts', { credential: cred, body: { externalUserId: uniqueUserId('modules') } });
    assert.equal(created.status, 201, created.text);
    accountId = created.body.account.id;
    const exchanged = await call('/v2/client/auth/exchange', { credential: cred, body: { accountId } });
    assert.equal(exchanged.status, 200, exchanged.text);
    token = exchanged.body.accessToken;
    full = await start({});
  });
  after(() => full.close());

  /** One call of a route as its caller makes it: Basic for the partner API, Bearer and the payment secret for the client API. */
  const callRoute = (api: Running, route: RouteKey, credential: AppCredential = cred) => {
    const [method, path] = route.split(' ') as [string, string];
    const client = path.startsWith('/v2/client/me/');
    return call(fill(path, accountId), {
      baseUrl: api.baseUrl,
      method,
      credential: client ? null : credential,
      headers: {
        'idempotency-key': `modules-${uniqueUserId()}`,
        ...(client ? { authorization: `Bearer ${token}`, 'x-svc-payment-secret': 'payment_nothing_secret_x' } : {}),
      },
      ...(method === 'GET' ? {} : { body: {} }),
    });
  };

  /** What a call could have created for the app. */
  const footprint = async () => {
    const h = await getHarness();
    const p = h.db.prisma;
    const appId = cred.appId;
    return Promise.all([
      p.account.count({ where: { appId } }),
      p.payment.count({ where: { appId } }),
      p.depositAddress.count({ where: { appId } }),
      p.vault.count({ where: { appId } }),
      p.vaultAuditEvent.count({ where: { vault: { appId } } }),
      p.bankAccount.count({ where: { appId } }),
      p.fundReturn.count({ where: { appId } }),
      p.connectedWallet.count({ where: { accountId } }),
      p.idempotencyRecord.count({ where: { appId } }),
      p.clientTokenGeneration.count({ where: { accountId } }),
    ]);
  };

  test('every /v2 route of the app belongs to a module, or is said to belong to none', () => {
    const unassigned = full.routes.filter((r) => !(r in ROUTE_MODULES));
    assert.deepEqual(unassigned, [], 'add each route to ROUTE_MODULES (and guard it with requireAccess/requireModule)');
    assert.deepEqual(
      Object.keys(ROUTE_MODULES).filter((r) => !full.routes.includes(r as RouteKey)),
      [],
      'ROUTE_MODULES names a route the app does not have',
    );
  });

  test('with every module on, no route answers 424 chain_config_missing for its module', async () => {
    for (const route of full.routes) {
      const res = await callRoute(full, route);
      assert.ok(!(res.status === 424 && res.body?.error?.details?.module), `${route}: ${res.status} ${res.text}`);
    }
  });

  for (const id of MODULE_IDS) {
    test(`${id} off: the config reports it unavailable (not_entitled) and every route of it answers 424 chain_config_missing (but those that answer while it is off), creating nothing`, async () => {
      const h = await getHarness();
      const off = await start({ environments: sandboxWithout(h.environments, id) });
      try {
        const config = await call('/v2/partners/config', { credential: cred, baseUrl: off.baseUrl });
        assert.equal(config.status, 200, config.text);
        const state = config.body.modules.find((m: { id: string }) => m.id === id);
        assert.deepEqual(
          [state.entitled, state.credentialAllowed, state.available, state.disabledReason],
          [false, true, false, 'not_entitled'],
        );
        const before = await footprint();
        const routes = off.routes.filter((r) => ROUTE_MODULES[r]?.includes(id));
        // Webhooks are managed in the dashboard: the module has no route here.
        assert.equal(routes.length > 0, id !== 'webhooks', `${id}: ${routes.length} routes`);
        for (const route of routes) {
          const res = await callRoute(off, route);
          if (ANSWER_WHILE_OFF[route] === id) {
            assertAllCountriesUnavailable(res, 'not_entitled');
            continue;
          }
          assert.equal(res.status, 424, `${route}: ${res.text}`);
          assert.deepEqual(res.body.error, {
            code: 'chain_config_missing',
            message: `The ${id} module is not available for this app (not_entitled)`,
            details: { module: id, disabledReason: 'not_entitled' },
          });
        }
        assert.deepEqual(await footprint(), before, 'a refused call creates nothing');
        // The other modules' routes still run.
        for (const route of off.routes.filter((r) => !ROUTE_MODULES[r]?.includes(id))) {
          const res = await callRoute(off, route);
          assert.ok(!(res.status === 424 && res.body?.error?.details?.module), `${route}: ${res.status} ${res.text}`);
        }
      } finally {
        await off.close();
      }
    });
  }

  test('a missing scope stays 403 forbidden on a module that is off: the scope is checked first', async () => {
    const h = await getHarness();
    const off = await start({ environments: sandboxWithout(h.environments, 'payments', 'vaults') });
    try {
      const noPayments = await newApp({ scopes: ['v2:accounts'] });
      for (const route of ['GET /v2/payments', 'POST /v2/payments/:paymentId/refunds', 'POST /v2/client/auth/exchange'] as RouteKey[]) {
        const res = await callRoute(off, route, noPayments);
        assert.equal(res.status, 403, `${route}: ${res.text}`);
        assert.equal(res.body.error.code, 'forbidden');
      }
      const noVaults = await newApp({ scopes: ['v2:accounts', 'v2:payments'] });
      const vault = await call(`/v2/accounts/${accountId}/vault`, { credential: noVaults, baseUrl: off.baseUrl });
      assert.equal(vault.status, 403, vault.text);
    } finally {
      await off.close();
    }
  });

  test("bank accounts listed but without the deployment's off-ramp provider: not_operational in the config, 424 on its routes, every country unavailable in the requirements", async () => {
    const off = await start({ offramp: undefined });
    try {
      const config = await call('/v2/partners/config', { credential: cred, baseUrl: off.baseUrl });
      const bank = config.body.modules.find((m: { id: string }) => m.id === 'bank_accounts');
      assert.deepEqual([bank.entitled, bank.operational, bank.available, bank.disabledReason], [true, false, false, 'not_operational']);
      const method = config.body.capabilities.payments.methods.externalBank;
      assert.deepEqual([method.available, method.preparationAvailable, method.paymentExecutionAvailable], [false, false, false]);
      assertAllCountriesUnavailable(await callRoute(off, 'GET /v2/accounts/:accountId/bank-account-requirements'), 'not_operational');
      const linked = await callRoute(off, 'POST /v2/accounts/:accountId/bank-accounts');
      assert.equal(linked.status, 424, linked.text);
      assert.deepEqual(linked.body.error.details, { module: 'bank_accounts', disabledReason: 'not_operational' });
    } finally {
      await off.close();
    }
  });
});
