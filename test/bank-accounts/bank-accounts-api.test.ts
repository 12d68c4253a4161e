import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/logger';
import {
  ProviderError,
  type BankAccountRegistration,
  type OfframpProvider,
  type ProviderBankAccount,
} from '../../src/offramp/offramp-provider';
import {
  ZBankAccountList,
  ZBankAccountRequirements,
  ZBankAccountResponse,
  ZBankDirectory,
} from '../../src/domain/bank-accounts/bank-account.schemas';
import { BANK_ACCOUNT_SCHEMAS, noLinkingSchema } from '../../src/domain/bank-accounts/bank-requirements';
import { BANK_DIRECTORY } from '../../src/domain/bank-accounts/bank-directory';
import {
  accountNumberOf,
  applyProviderBankAccountUpdate,
  bankAccountIdFor,
  onProviderBankAccountUpdated,
} from '../../src/domain/bank-accounts/bank-accounts';
import { ZPartnerConfig } from '../../src/domain/apps/partner-config.schemas';
import type { AppCredential } from '../../src/domain/apps/apps';
import { call, newApp, uniqueUserId, type RequestOptions } from '../support/api-client';
import { listenApi } from '../support/bounded-api';
import { US_NUMBER, usBody as usBodyOf } from './fixtures';
import { until } from '../support/until';
import { apiDepsOnHarness, getHarness, TEST_OFFRAMP_CALLBACK_SECRET, TEST_SERVICE_SECRET } from '../support/harness';
import { HttpOfframpProvider } from '../../src/offramp/http-provider';
import { freePort } from '../../src/embedded/process';
import { SIGNATURE_HEADER, signCallback } from '../../src/offramp/sandbox-provider/contract';

/** A provider that registers accounts in memory, or fails the way it is told to. */
class InTestProvider implements OfframpProvider {
  readonly code = 'sandbox';
  mode: 'pending' | 'unavailable' | 'failure' = 'pending';
  readonly registrations: BankAccountRegistration[] = [];
  /** What the provider answers a read of each account (pending until a test decides it). */
  readonly accounts = new Map<string, ProviderBankAccount>();
  /** The sandbox provider's signature check (the callbacks these tests post are signed as its). */
  private readonly signatures = new HttpOfframpProvider({ baseUrl: 'http://127.0.0.1:9', callbackSecret: TEST_OFFRAMP_CALLBACK_SECRET });
  registerBankAccount(r: BankAccountRegistration): Promise<ProviderBankAccount> {
    if (this.mode === 'unavailable') return Promise.reject(new ProviderError('unavailable', 'connection refused'));
    if (this.mode === 'failure') return Promise.reject(new ProviderError('failure', `refused ${r.accountNumber}`, 'invalid_account'));
    this.registrations.push(r);
    const account: ProviderBankAccount = { providerAccountId: `pba_${r.bankAccountId}`, status: 'pending', failureReason: null };
    this.accounts.set(r.bankAccountId, account);
    return Promise.resolve(account);
  }
  getBankAccount(bankAccountId: string): Promise<ProviderBankAccount | null> {
    return Promise.resolve(this.accounts.get(bankAccountId) ?? null);
  }
  verifyCallback(rawBody: string, headers: Record<string, string | string[] | undefined>) {
    return this.signatures.verifyCallback(rawBody, headers);
  }
  // Linking uses registration only.
  quote(): never {
    throw new Error('not used');
  }
  createPayout(): never {
    throw new Error('not used');
  }
  getPayout(): never {
    throw new Error('not used');
  }
}

const usBody = (accountNumber = US_NUMBER) => ({ ...usBodyOf(accountNumber), accountType: 'savings' });

let keys = 0;
const newKey = () => `bank-${process.pid}-${(keys += 1)}`;

describe('Linked bank accounts (API)', () => {
  const provider = new InTestProvider();
  const logLines: string[] = [];
  let api: { baseUrl: string; close(): Promise<void> };
  let cred: AppCredential;
  let accountId: string;
  let other: AppCredential;

  const req = (path: string, opts: RequestOptions = {}) => call(path, { credential: cred, baseUrl: api.baseUrl, ...opts });
  const link = (body: unknown, key: string | null = newKey(), opts: RequestOptions = {}) =>
    req(`/v2/accounts/${accountId}/bank-accounts`, { body, ...(key ? { headers: { 'idempotency-key': key } } : {}), ...opts });
  const rowsOf = async (id: string) => (await getHarness()).db.prisma.bankAccount.count({ where: { accountId: id } });

  before(async () => {
    const logger = createLogger(
      'debug',
      new Writable({
        write(chunk: Buffer, _enc, cb) {
          logLines.push(chunk.toString('utf8'));
          cb();
        },
      }),
    );
    api = await listenApi(
      await apiDepsOnHarness({
        logger,
        offramp: { provider, onBankAccountUpdated: onProviderBankAccountUpdated((await getHarness()).db.prisma) },
      }),
    );
    cred = await newApp();
    other = await newApp();
    const created = await req('/v2/accounts', { body: { externalUserId: uniqueUserId('bank') } });
    assert.equal(created.status, 201, created.text);
    accountId = created.body.account.id;
  });
  after(() => api.close());

  test('requirements list US, PH and VN as available in the sandbox, with the very schemas the link enforces, and other countries as unavailable', async () => {
    const res = await req(`/v2/accounts/${accountId}/bank-account-requirements`);
    assert.equal(res.status, 200, res.text);
    const body = ZBankAccountRequirements.parse(res.body);
    assert.equal(body.accountId, accountId);
    const byCountry = new Map(body.countries.map((c) => [c.country, c]));
    for (const [country, currency] of [
      ['US', 'USD'],
      ['PH', 'PHP'],
      ['VN', 'VND'],
    ] as const) {
      const c = byCountry.get(country)!;
      assert.equal(c.available, true);
      assert.equal(c.unavailableReason, null);
      assert.equal(c.currency, currency);
      assert.deepEqual(c.schema, BANK_ACCOUNT_SCHEMAS[country]);
      assert.equal((c.schema as { additionalProperties: boolean }).additionalProperties, false);
    }
    const gb = byCountry.get('GB')!;
    assert.deepEqual([gb.available, gb.unavailableReason], [false, 'country_not_supported']);
    assert.deepEqual(gb.schema, noLinkingSchema('GB', 'GBP'));
  });

  test('a production app (no bank_accounts module) sees every country unavailable (not_entitled) and gets 424 chain_config_missing for linking', async () => {
    const prod = await newApp({ environment: 'production' });
    const acct = await call('/v2/accounts', {
      credential: prod,
      baseUrl: api.baseUrl,
      body: { externalUserId: uniqueUserId('bank-prod') },
    });
    const res = await call(`/v2/accounts/${acct.body.account.id}/bank-account-requirements`, { credential: prod, baseUrl: api.baseUrl });
    assert.equal(res.status, 200, res.text);
    const us = ZBankAccountRequirements.parse(res.body).countries.find((c) => c.country === 'US')!;
    assert.deepEqual([us.available, us.unavailableReason], [false, 'not_entitled']);
    const linked = await call(`/v2/accounts/${acct.body.account.id}/bank-accounts`, {
      credential: prod,
      baseUrl: api.baseUrl,
      body: usBody(),
      headers: { 'idempotency-key': newKey() },
    });
    assert.equal(linked.status, 424, linked.text);
    assert.equal(linked.body.error.code, 'chain_config_missing');
    assert.equal(await rowsOf(acct.body.account.id), 0);
  });

  test('links a US account: 201, pending_verification, last4 only; the stored column is encrypted, never the number', async () => {
    const key = newKey();
    const res = await link(usBody(), key);
    assert.equal(res.status, 201, res.text);
    const { bankAccount } = ZBankAccountResponse.parse(res.body);
    assert.equal(bankAccount.id, bankAccountIdFor(TEST_SERVICE_SECRET, cred.appId, key));
    assert.deepEqual(
      { ...bankAccount, id: undefined, createdAt: undefined, updatedAt: undefined },
      {
        id: undefined,
        accountId,
        accountHolderName: 'Ada Lovelace',
        country: 'US',
        currency: 'USD',
        bankName: 'JPMorgan Chase Bank, N.A.',
        bankCode: 'CHASUS33',
        accountNumberLast4: '6789',
        rail: 'ach',
        status: 'pending_verification',
        verification: { version: 1, verifiedAt: null },
        disabledAt: null,
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    assert.ok(!res.text.includes(US_NUMBER));
    const registration = provider.registrations.find((r) => r.bankAccountId === bankAccount.id)!;
    assert.deepEqual(registration.details, { routingNumber: '021000021', accountType: 'savings' });
    assert.equal(registration.accountNumber, US_NUMBER);

    const h = await getHarness();
    const { rows } = await h.db.pool.query<Record<string, string>>('SELECT * FROM bank_accounts WHERE id = $1', [bankAccount.id]);
    const stored = JSON.stringify(rows[0]);
    assert.ok(!stored.includes(US_NUMBER), stored);
    assert.ok(!stored.includes('123456789'), 'no long run of the number anywhere in the row');
    const row = (await h.db.prisma.bankAccount.findUnique({ where: { id: bankAccount.id } }))!;
    assert.equal(accountNumberOf(TEST_SERVICE_SECRET, row), US_NUMBER);
    assert.equal(row.providerAccountId, `pba_${bankAccount.id}`);
    // Associated data: the ciphertext does not open as another account's.
    assert.throws(() => accountNumberOf(TEST_SERVICE_SECRET, { ...row, id: 'bank_account_other' }));
    assert.ok(!logLines.join('').includes(US_NUMBER), 'the account number never reaches a log line');
  });

  test('an identical retry replays the link; the same key with another body is 409 idempotency_conflict; the same real account again is 409 conflict', async () => {
    const key = newKey();
    const body = usBody('55554444');
    const first = await link(body, key);
    assert.equal(first.status, 201, first.text);
    const registered = provider.registrations.length;
    const replay = await link(body, key);
    assert.equal(replay.status, 201);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.body, first.body);
    assert.equal(provider.registrations.length, registered, 'a replay does not register again');

    const changed = await link({ ...body, accountHolderName: 'Someone Else' }, key);
    assert.equal(changed.status, 409);
    assert.equal(changed.body.error.code, 'idempotency_conflict');

    const again = await link(body, newKey());
    assert.equal(again.status, 409, again.text);
    assert.equal(again.body.error.code, 'conflict');
    assert.equal(again.body.error.details.bankAccountId, first.body.bankAccount.id);
  });

  test('bad input is 400 bad_request with field details and creates nothing: extra field, NUL, bad routing checksum, unknown bank, no Idempotency-Key', async () => {
    const before = await rowsOf(accountId);
    const cases: Array<[unknown, string]> = [
      [{ ...usBody(), nickname: 'main' }, 'body.nickname'],
      [{ ...usBody(), accountHolderName: 'Ada\u0000Lovelace' }, 'body.accountHolderName'],
      [{ ...usBody(), routingNumber: '021000022' }, 'body.routingNumber'],
      [{ ...usBody(), bankCode: 'BNORPHMM' }, 'body.bankCode'],
      [{ ...usBody(), accountNumber: '12' }, 'body.accountNumber'],
    ];
    for (const [body, field] of cases) {
      const res = await link(body);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.code, 'bad_request');
      assert.deepEqual(
        res.body.error.details.fields.map((f: { field: string }) => f.field),
        [field],
      );
    }
    const noKey = await link(usBody('9999000011'), null);
    assert.equal(noKey.status, 400);
    assert.equal(noKey.body.error.details.fields[0].field, 'header.Idempotency-Key');
    const gb = await link({ ...usBody(), country: 'GB' });
    assert.equal(gb.status, 422);
    assert.equal(gb.body.error.code, 'payment_method_not_supported');
    assert.equal(await rowsOf(accountId), before);
  });

  test('provider down is 503 provider_unavailable and a refusal 502 provider_failure, creating nothing; a retry with the same key then links', async () => {
    const before = await rowsOf(accountId);
    const key = newKey();
    try {
      provider.mode = 'unavailable';
      const down = await link(usBody('77776666'), key);
      assert.equal(down.status, 503, down.text);
      assert.equal(down.body.error.code, 'provider_unavailable');
      provider.mode = 'failure';
      const refused = await link(usBody('77775555'));
      assert.equal(refused.status, 502, refused.text);
      assert.equal(refused.body.error.code, 'provider_failure');
      assert.ok(!refused.text.includes('77775555'), 'the provider message (which echoes the number) stays out');
      assert.equal(await rowsOf(accountId), before);
    } finally {
      provider.mode = 'pending';
    }
    const retried = await link(usBody('77776666'), key);
    assert.equal(retried.status, 201, retried.text);
    assert.equal(retried.body.bankAccount.id, bankAccountIdFor(TEST_SERVICE_SECRET, cred.appId, key));
  });

  test('get and list (cursor pages, status filter); another app gets 404 for the account and the bank account', async () => {
    const acct = await req('/v2/accounts', { body: { externalUserId: uniqueUserId('bank-list') } });
    const id = acct.body.account.id as string;
    const ids: string[] = [];
    for (const n of ['11110001', '11110002', '11110003']) {
      const res = await req(`/v2/accounts/${id}/bank-accounts`, { body: usBody(n), headers: { 'idempotency-key': newKey() } });
      assert.equal(res.status, 201, res.text);
      ids.push(res.body.bankAccount.id);
    }
    const got = await req(`/v2/accounts/${id}/bank-accounts/${ids[0]}`);
    assert.equal(got.status, 200);
    assert.equal(ZBankAccountResponse.parse(got.body).bankAccount.id, ids[0]);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await req(`/v2/accounts/${id}/bank-accounts?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(page.status, 200, page.text);
      const body = ZBankAccountList.parse(page.body);
      seen.push(...body.bankAccounts.map((b) => b.id));
      cursor = body.nextCursor;
    } while (cursor);
    assert.deepEqual([...seen].sort(), [...ids].sort());
    const verifiedOnly = await req(`/v2/accounts/${id}/bank-accounts?status=verified`);
    assert.deepEqual(verifiedOnly.body.bankAccounts, []);

    for (const path of [
      `/v2/accounts/${id}/bank-accounts/${ids[0]}`,
      `/v2/accounts/${id}/bank-accounts`,
      `/v2/accounts/${id}/bank-account-requirements`,
    ]) {
      const res = await call(path, { credential: other, baseUrl: api.baseUrl });
      assert.equal(res.status, 404, path);
      assert.equal(res.body.error.code, 'not_found');
    }
    const wrongAccount = await req(`/v2/accounts/${accountId}/bank-accounts/${ids[0]}`);
    assert.equal(wrongAccount.status, 404);
  });

  test('the provider update moves the account to verified once; repeats and late contradictions change nothing; disable is final', async () => {
    const res = await link(usBody('22223333'));
    const id = res.body.bankAccount.id as string;
    const prisma = (await getHarness()).db.prisma;
    const verified = { providerAccountId: `pba_${id}`, status: 'verified' as const, failureReason: null };
    const first = await applyProviderBankAccountUpdate(prisma, id, verified);
    assert.equal(first?.status, 'verified');
    assert.equal(first?.statusVersion, 2);
    const read = await req(`/v2/accounts/${accountId}/bank-accounts/${id}`);
    assert.equal(read.body.bankAccount.status, 'verified');
    assert.equal(read.body.bankAccount.verification.version, 2);
    assert.ok(read.body.bankAccount.verification.verifiedAt);

    const again = await applyProviderBankAccountUpdate(prisma, id, verified);
    assert.deepEqual(again, first, 'a repeated callback changes nothing');
    const contradiction = await applyProviderBankAccountUpdate(prisma, id, { ...verified, status: 'failed', failureReason: 'late' });
    assert.equal(contradiction?.status, 'verified');
    assert.equal(await applyProviderBankAccountUpdate(prisma, 'bank_account_unknown', verified), null);

    const disabled = await req(`/v2/accounts/${accountId}/bank-accounts/${id}/disable`, { method: 'POST', body: {} });
    assert.equal(disabled.status, 200, disabled.text);
    assert.equal(disabled.body.bankAccount.status, 'disabled');
    assert.ok(disabled.body.bankAccount.disabledAt);
    const twice = await req(`/v2/accounts/${accountId}/bank-accounts/${id}/disable`, { method: 'POST', body: {} });
    assert.deepEqual(twice.body, disabled.body);
    const other404 = await call(`/v2/accounts/${accountId}/bank-accounts/${id}/disable`, {
      credential: other,
      baseUrl: api.baseUrl,
      method: 'POST',
      body: {},
    });
    assert.equal(other404.status, 404);
  });

  test('a provider callback is a hint: a signed one claiming verified for an account the provider reports pending changes nothing; once the provider reports verified, one claiming failed verifies it', async () => {
    const res = await link(usBody('55556666'));
    assert.equal(res.status, 201, res.text);
    const id = res.body.bankAccount.id as string;
    const callback = async (status: string) => {
      const data = {
        bankAccountId: id,
        providerAccountId: `pba_${id}`,
        status,
        failureReason: status === 'failed' ? 'name_mismatch' : null,
        accountNumberLast4: '6666',
      };
      const body = JSON.stringify({ id: `evt_${id}_${status}`, type: 'bank_account.updated', createdAt: new Date().toISOString(), data });
      const answer = await fetch(`${api.baseUrl}/v2/providers/sandbox/callbacks`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [SIGNATURE_HEADER]: signCallback(TEST_OFFRAMP_CALLBACK_SECRET, body, Math.floor(Date.now() / 1000)),
        },
        body,
      });
      assert.equal(answer.status, 200, await answer.text());
      return (await req(`/v2/accounts/${accountId}/bank-accounts/${id}`)).body.bankAccount;
    };
    assert.equal((await callback('verified')).status, 'pending_verification', "the claim is not the provider's answer");
    provider.accounts.set(id, { providerAccountId: `pba_${id}`, status: 'verified', failureReason: null });
    const verified = await callback('failed');
    assert.equal(verified.status, 'verified');
    assert.equal(verified.verification.version, 2);
  });

  test('a failed verification lands in verification_failed', async () => {
    const res = await link(usBody('44440002'));
    const id = res.body.bankAccount.id as string;
    const after = await applyProviderBankAccountUpdate((await getHarness()).db.prisma, id, {
      providerAccountId: `pba_${id}`,
      status: 'failed',
      failureReason: 'account_not_found',
    });
    assert.equal(after?.status, 'verification_failed');
    assert.equal(after?.failureReason, 'account_not_found');
  });

  test('bank account routes need v2:accounts; the directory needs v2:payments', async () => {
    const paymentsOnly = await newApp({ scopes: ['v2:payments'] });
    const res = await call(`/v2/accounts/${accountId}/bank-accounts`, { credential: paymentsOnly, baseUrl: api.baseUrl });
    assert.equal(res.status, 403);
    const accountsOnly = await newApp({ scopes: ['v2:accounts'] });
    const dir = await call('/v2/payments/external-bank/banks?country=US', { credential: accountsOnly, baseUrl: api.baseUrl });
    assert.equal(dir.status, 403);
  });

  test('the bank directory answers the shipped list with its source; a missing or unknown country is 400', async () => {
    for (const country of ['US', 'PH', 'VN'] as const) {
      const res = await req(`/v2/payments/external-bank/banks?country=${country}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(ZBankDirectory.parse(res.body), BANK_DIRECTORY[country]);
    }
    for (const q of ['', '?country=GB', '?country=us', '?country=US&extra=1']) {
      const res = await req(`/v2/payments/external-bank/banks${q}`);
      assert.equal(res.status, 400, q);
      assert.equal(res.body.error.code, 'bad_request');
    }
  });

  test('the config reports the environment bank countries and the directory endpoint', async () => {
    const res = await req('/v2/partners/config');
    assert.equal(res.status, 200);
    const bank = ZPartnerConfig.parse(res.body).capabilities.payments.methods.externalBank;
    assert.equal(bank.directoryEndpoint, '/v2/payments/external-bank/banks');
    assert.deepEqual(
      bank.countries.map((c) => [c.country, c.countryName, c.currency, c.rails, c.enabled]),
      [
        ['US', 'United States', 'USD', ['ach'], true],
        ['PH', 'Philippines', 'PHP', ['instapay', 'pesonet'], true],
        ['VN', 'Vietnam', 'VND', ['bank_transfer'], true],
      ],
    );
    assert.equal(bank.preparationAvailable, true);
    assert.equal(bank.paymentExecutionAvailable, true);
    assert.equal(bank.destinationType, 'bank_account');
    assert.equal(ZPartnerConfig.parse(res.body).capabilities.payments.capabilities.externalBank, true);
    const prod = await call('/v2/partners/config', { credential: await newApp({ environment: 'production' }), baseUrl: api.baseUrl });
    assert.deepEqual(prod.body.capabilities.payments.methods.externalBank.countries, []);
    assert.equal(prod.body.capabilities.payments.methods.externalBank.preparationAvailable, false);
  });
});

describe('Linked bank accounts with the sandbox provider (its own process, signed callbacks)', () => {
  let cred: AppCredential;
  let accountId: string;

  before(async () => {
    cred = await newApp();
    const created = await call('/v2/accounts', { credential: cred, body: { externalUserId: uniqueUserId('bank-sbx') } });
    assert.equal(created.status, 201, created.text);
    accountId = created.body.account.id;
  });

  const linkAndSettle = async (accountNumber: string, settled: string) => {
    const res = await call(`/v2/accounts/${accountId}/bank-accounts`, {
      credential: cred,
      body: usBodyOf(accountNumber),
      headers: { 'idempotency-key': newKey() },
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.bankAccount.status, 'pending_verification');
    const id = res.body.bankAccount.id as string;
    const read = async () => (await call(`/v2/accounts/${accountId}/bank-accounts/${id}`, { credential: cred })).body.bankAccount;
    return until(async () => {
      const b = await read();
      return b.status === settled ? b : undefined;
    }, `${id} ${settled}`);
  };

  test('link -> pending_verification -> the provider callback -> verified', async () => {
    const verified = await linkAndSettle('000111222333', 'verified');
    assert.equal(verified.verification.version, 2);
    assert.ok(verified.verification.verifiedAt);
    const row = await (await getHarness()).db.prisma.bankAccount.findUniqueOrThrow({ where: { id: verified.id } });
    assert.match(row.providerAccountId ?? '', /^ba_sbx_/);
    assert.equal(row.statusVersion, 2);
  });

  test('an account number ending 0002 (the sandbox magic value) ends verification_failed', async () => {
    const failed = await linkAndSettle('000111220002', 'verification_failed');
    assert.equal(failed.verification.verifiedAt, null);
    const row = await (await getHarness()).db.prisma.bankAccount.findUniqueOrThrow({ where: { id: failed.id } });
    assert.equal(row.failureReason, 'account_not_found');
  });

  test('provider down (nothing listening) is 503 provider_unavailable and creates nothing', async () => {
    const h = await getHarness();
    const down = await listenApi(
      await apiDepsOnHarness({
        offramp: {
          provider: new HttpOfframpProvider({
            baseUrl: `http://127.0.0.1:${await freePort()}`,
            callbackSecret: TEST_OFFRAMP_CALLBACK_SECRET,
          }),
        },
      }),
    );
    try {
      const res = await call(`/v2/accounts/${accountId}/bank-accounts`, {
        credential: cred,
        baseUrl: down.baseUrl,
        body: usBodyOf('000999888777'),
        headers: { 'idempotency-key': newKey() },
      });
      assert.equal(res.status, 503, res.text);
      assert.equal(res.body.error.code, 'provider_unavailable');
      assert.equal(await h.db.prisma.bankAccount.count({ where: { accountId, accountNumberLast4: '8777' } }), 0);
    } finally {
      await down.close();
    }
  });

  test('a callback for an id of the service form that is not stored yet is refused (the provider sends it again); another provider id is ignored', async () => {
    const handler = onProviderBankAccountUpdated((await getHarness()).db.prisma);
    const account = { providerAccountId: 'ba_sbx_x', status: 'verified' as const, failureReason: null };
    await assert.rejects(handler('bank_account_0notstoredyet', account), /not stored/);
    await handler('ba_not_ours', account);
  });
});
