import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { loadEnvironments, type TEnvironmentConfig } from '../../src/config/environments';
import { ApiError } from '../../src/domain/requests/errors';
import { isValidAbaRoutingNumber } from '../../src/domain/bank-accounts/aba-routing';
import { BANK_DIRECTORY } from '../../src/domain/bank-accounts/bank-directory';
import { BANK_ACCOUNT_SCHEMAS, validateBankFields } from '../../src/domain/bank-accounts/bank-requirements';
import { usBody } from './fixtures';
import { Ajv } from 'ajv';
import type { AppCredential } from '../../src/domain/apps/apps';
import { call, newApp, responseChecker, uniqueUserId } from '../support/api-client';
import { listenApi } from '../support/bounded-api';
import { apiDepsOnHarness } from '../support/harness';

const sandbox = loadEnvironments().environments.sandbox;
const production = loadEnvironments().environments.production;

const US_BODY = usBody();
const VN_BODY = {
  country: 'VN',
  currency: 'VND',
  accountHolderName: 'Nguyen Van A',
  bankName: 'Vietcombank',
  bankCode: 'BFTVVNVX',
  accountNumber: '0071000123456',
};
const PH_BODY = {
  country: 'PH',
  currency: 'PHP',
  accountHolderName: 'Juan Dela Cruz',
  bankName: 'BDO Unibank, Inc.',
  bankCode: 'BNORPHMM',
  accountNumber: '001234567890',
};

/** The 400's field names, or fails when the call does not refuse with bad_request. */
function badFields(env: TEnvironmentConfig, body: unknown): string[] {
  try {
    validateBankFields(env, body);
  } catch (err) {
    assert.ok(err instanceof ApiError, String(err));
    assert.equal(err.code, 'bad_request', err.message);
    return (err.details as { fields: Array<{ field: string }> }).fields.map((f) => f.field).sort();
  }
  assert.fail('accepted');
}

describe('Bank account requirements: schemas and validation', () => {
  test('the VN schema is exactly the spec table, strict', () => {
    assert.deepEqual(BANK_ACCOUNT_SCHEMAS.VN, {
      type: 'object',
      additionalProperties: false,
      required: ['country', 'currency', 'accountHolderName', 'bankName', 'bankCode', 'accountNumber'],
      properties: {
        country: { const: 'VN' },
        currency: { const: 'VND' },
        accountHolderName: { type: 'string', minLength: 1, maxLength: 160 },
        beneficiaryType: { type: 'string', enum: ['individual', 'business'], default: 'individual' },
        bankName: { type: 'string', minLength: 1, maxLength: 160 },
        bankCode: {
          type: 'string',
          minLength: 1,
          maxLength: 64,
          pattern: '^[A-Za-z0-9_-]+$',
          description: 'A bankCode from GET /v2/payments/external-bank/banks?country=VN',
        },
        accountNumber: { type: 'string', minLength: 4, maxLength: 34, pattern: '^[0-9]{4,34}$', writeOnly: true },
        rail: { const: 'bank_transfer', default: 'bank_transfer' },
      },
    });
  });

  test('valid bodies of each country pass, with the defaults applied', () => {
    const us = validateBankFields(sandbox, US_BODY);
    assert.deepEqual(us, { ...US_BODY, beneficiaryType: 'individual', accountType: 'checking', rail: 'ach' });
    assert.equal(validateBankFields(sandbox, VN_BODY).rail, 'bank_transfer');
    assert.equal(validateBankFields(sandbox, { ...PH_BODY, rail: 'pesonet' }).rail, 'pesonet');
    assert.equal(validateBankFields(sandbox, PH_BODY).rail, 'instapay');
  });

  test('extra fields, wrong consts, bad patterns and missing fields are each named', () => {
    assert.deepEqual(badFields(sandbox, { ...VN_BODY, iban: 'x', nickname: 'y' }), ['body.iban', 'body.nickname']);
    assert.deepEqual(badFields(sandbox, { ...VN_BODY, currency: 'USD', rail: 'ach' }), ['body.currency', 'body.rail']);
    assert.deepEqual(badFields(sandbox, { ...VN_BODY, accountNumber: '12a4', bankCode: 'bad code' }), [
      'body.accountNumber',
      'body.bankCode',
    ]);
    const missing: Partial<typeof US_BODY> = { ...US_BODY };
    delete missing.accountNumber;
    assert.deepEqual(badFields(sandbox, missing), ['body.accountNumber']);
    assert.deepEqual(badFields(sandbox, { ...US_BODY, accountNumber: '123456789012345678' }), ['body.accountNumber']);
    assert.deepEqual(badFields(sandbox, { ...PH_BODY, accountNumber: '123456789' }), ['body.accountNumber']);
    assert.deepEqual(badFields(sandbox, ['US']), ['body']);
    assert.deepEqual(badFields(sandbox, { ...US_BODY, country: 'us' }), ['body.country']);
  });

  test('NUL characters are refused before the schema, even where the schema would allow any text', () => {
    assert.deepEqual(badFields(sandbox, { ...VN_BODY, accountHolderName: 'Nguyen\u0000Van A' }), ['body.accountHolderName']);
    assert.deepEqual(badFields(sandbox, { ...VN_BODY, accountNumber: '1234\u00005678' }), ['body.accountNumber']);
  });

  test('a bank code that is not in the country directory is refused', () => {
    assert.deepEqual(badFields(sandbox, { ...VN_BODY, bankCode: 'CHASUS33' }), ['body.bankCode']);
    assert.deepEqual(badFields(sandbox, { ...US_BODY, bankCode: 'NOTABANK' }), ['body.bankCode']);
  });

  test('a routing number with a wrong check digit is refused with the same envelope', () => {
    assert.deepEqual(badFields(sandbox, { ...US_BODY, routingNumber: '021000022' }), ['body.routingNumber']);
  });

  test('property: a random 9-digit routing number is accepted iff its ABA checksum is valid', () => {
    const weights = [3, 7, 1, 3, 7, 1, 3, 7, 1];
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 9, maxLength: 9 }), (digits) => {
        const routingNumber = digits.join('');
        const valid = digits.reduce((sum, d, i) => sum + d * weights[i]!, 0) % 10 === 0;
        let accepted = true;
        try {
          validateBankFields(sandbox, { ...US_BODY, routingNumber });
        } catch (err) {
          assert.ok(err instanceof ApiError && err.code === 'bad_request');
          accepted = false;
        }
        assert.equal(accepted, valid, routingNumber);
      }),
      { numRuns: 500 },
    );
  });

  test('a country the service never links in is 422; one the environment does not enable is 424', () => {
    assert.throws(
      () => validateBankFields(sandbox, { ...US_BODY, country: 'GB' }),
      (e) => e instanceof ApiError && e.code === 'payment_method_not_supported',
    );
    assert.throws(
      () => validateBankFields(production, US_BODY),
      (e) => e instanceof ApiError && e.code === 'chain_config_missing',
    );
  });

  test('the shipped directory: 8-15 banks a country, unique codes, a named source, US routing numbers checksum-valid', () => {
    for (const dir of Object.values(BANK_DIRECTORY)) {
      assert.ok(dir.banks.length >= 8 && dir.banks.length <= 15, `${dir.country}: ${dir.banks.length} banks`);
      assert.equal(new Set(dir.banks.map((b) => b.bankCode)).size, dir.banks.length);
      assert.ok(dir.source.length > 20);
      for (const b of dir.banks) {
        assert.match(b.bankCode, /^[A-Za-z0-9_-]{1,64}$/);
        assert.match(b.swiftBic, new RegExp(`^[A-Z]{4}${dir.country}[A-Z0-9]{2}$`));
      }
    }
    for (const b of BANK_DIRECTORY.US.banks) {
      assert.ok(b.routingNumbers && b.routingNumbers.length > 0);
      for (const r of b.routingNumbers) assert.ok(isValidAbaRoutingNumber(r), `${b.name} ${r}`);
    }
    for (const b of BANK_DIRECTORY.VN.banks) assert.match(b.napasBin ?? '', /^970\d{3}$/);
  });
});

/** A valid link body per country the service links in; every other country has none. */
const VALID_BODIES: Record<string, Record<string, unknown>> = { US: US_BODY, PH: PH_BODY, VN: VN_BODY };
const LINKED_COUNTRIES = ['US', 'PH', 'VN'];

describe('Bank account requirements (API): every country listed, every schema strict', () => {
  const requirementsOf = (accountId: string, credential: AppCredential, baseUrl?: string) =>
    call(`/v2/accounts/${accountId}/bank-account-requirements`, { credential, ...(baseUrl ? { baseUrl } : {}) });
  const newAccount = async (credential: AppCredential, baseUrl?: string) => {
    const res = await call('/v2/accounts', {
      credential,
      ...(baseUrl ? { baseUrl } : {}),
      body: { externalUserId: uniqueUserId('bank-req') },
    });
    assert.equal(res.status, 201, res.text);
    return res.body.account.id as string;
  };

  /** Each schema is a valid strict JSON Schema (ajv, strict mode) refusing unknown fields; a linked country's valid body passes. */
  function assertStrictSchemas(countries: Array<{ country: string; schema: unknown }>) {
    const ajv = new Ajv({ strict: true, allErrors: true });
    for (const { country, schema } of countries) {
      assert.ok(schema && typeof schema === 'object', `${country}: a schema`);
      assert.equal(ajv.validateSchema(schema as object), true, `${country}: ${ajv.errorsText()}`);
      const validate = ajv.compile(schema as object);
      assert.equal((schema as { additionalProperties?: unknown }).additionalProperties, false, `${country}: strict`);
      const body = VALID_BODIES[country];
      if (body) {
        assert.equal(validate(structuredClone(body)), true, `${country}: ${ajv.errorsText(validate.errors)}`);
        assert.equal(validate({ ...structuredClone(body), nickname: 'x' }), false, `${country}: an unknown field`);
      } else {
        assert.equal(validate({ country, currency: 'XXX' }), false, `${country}: nothing links`);
        assert.equal(validate({ ...US_BODY, country }), false, `${country}: nothing links`);
      }
    }
  }

  test('module on: US, PH and VN available; every other country available false with a reason, each with a strict schema', async () => {
    const cred = await newApp();
    const res = await requirementsOf(await newAccount(cred), cred);
    assert.equal(res.status, 200, res.text);
    const countries = res.body.countries as Array<{
      country: string;
      available: boolean;
      unavailableReason: string | null;
      schema: unknown;
    }>;
    assert.deepEqual(
      countries.filter((c) => c.available).map((c) => c.country),
      LINKED_COUNTRIES,
    );
    for (const c of countries.filter((x) => !x.available)) assert.equal(c.unavailableReason, 'country_not_supported', c.country);
    for (const c of countries.filter((x) => x.available))
      assert.deepEqual(c.schema, BANK_ACCOUNT_SCHEMAS[c.country as keyof typeof BANK_ACCOUNT_SCHEMAS]);
    assertStrictSchemas(countries);
  });

  test('module not operational (no off-ramp provider): 200, every country available false with the reason', async () => {
    const api = await listenApi(await apiDepsOnHarness({ offramp: undefined }));
    try {
      const cred = await newApp();
      const res = await requirementsOf(await newAccount(cred, api.baseUrl), cred, api.baseUrl);
      assert.equal(res.status, 200, res.text);
      const countries = res.body.countries as Array<{
        country: string;
        available: boolean;
        unavailableReason: string | null;
        schema: unknown;
      }>;
      assert.ok(countries.length > LINKED_COUNTRIES.length);
      for (const c of countries) {
        assert.equal(c.available, false, c.country);
        assert.equal(c.unavailableReason, LINKED_COUNTRIES.includes(c.country) ? 'not_operational' : 'country_not_supported', c.country);
      }
      assertStrictSchemas(countries);
    } finally {
      await api.close();
    }
  });

  test('module not entitled (a production app): 200, every country available false; a missing scope is still 403 and an unknown account 404', async () => {
    const prod = await newApp({ environment: 'production' });
    const accountId = await newAccount(prod);
    const res = await requirementsOf(accountId, prod);
    assert.equal(res.status, 200, res.text);
    const countries = res.body.countries as Array<{
      country: string;
      available: boolean;
      unavailableReason: string | null;
      schema: unknown;
    }>;
    for (const c of countries) {
      assert.equal(c.available, false, c.country);
      assert.equal(c.unavailableReason, LINKED_COUNTRIES.includes(c.country) ? 'not_entitled' : 'country_not_supported', c.country);
    }
    assertStrictSchemas(countries);

    const noAccounts = await newApp({ environment: 'production', scopes: ['v2:payments'] });
    const forbidden = await requirementsOf(accountId, noAccounts);
    assert.equal(forbidden.status, 403, forbidden.text);
    assert.equal(forbidden.body.error.code, 'forbidden');
    const unknown = await requirementsOf('acct_nothing', prod);
    assert.equal(unknown.status, 404, unknown.text);
  });

  test('the OpenAPI operation does not document a 424 the route cannot answer', async () => {
    const op = (await responseChecker()).operationFor('GET', '/v2/accounts/acct_x/bank-account-requirements');
    assert.ok(op);
    assert.ok(!('424' in op.operation.responses), Object.keys(op.operation.responses).join(', '));
    for (const status of ['200', '400', '401', '403', '404', '429']) assert.ok(status in op.operation.responses, status);
  });
});
