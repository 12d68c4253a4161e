import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { loadEnvironments, type TEnvironmentConfig } from '../../src/config/environments';
import { ApiError } from '../../src/domain/errors';
import { isValidAbaRoutingNumber } from '../../src/domain/bank-accounts/aba-routing';
import { BANK_DIRECTORY } from '../../src/domain/bank-accounts/bank-directory';
import { BANK_ACCOUNT_SCHEMAS, validateBankFields } from '../../src/domain/bank-accounts/bank-requirements';
import { usBody } from './fixtures';

const sandbox = loadEnvironments().environments.sandbox;
const production = loadEnvironments().environments.production;

const US_BODY = usBody();
const VN_BODY = { country: 'VN', currency: 'VND', accountHolderName: 'Nguyen Van A', bankName: 'Vietcombank', bankCode: 'BFTVVNVX', accountNumber: '0071000123456' };
const PH_BODY = { country: 'PH', currency: 'PHP', accountHolderName: 'Juan Dela Cruz', bankName: 'BDO Unibank, Inc.', bankCode: 'BNORPHMM', accountNumber: '001234567890' };

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
    assert.deepEqual(badFields(sandbox, { ...VN_BODY, accountNumber: '12a4', bankCode: 'bad code' }), ['body.accountNumber', 'body.bankCode']);
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
    assert.throws(() => validateBankFields(sandbox, { ...US_BODY, country: 'GB' }), (e) => e instanceof ApiError && e.code === 'payment_method_not_supported');
    assert.throws(() => validateBankFields(production, US_BODY), (e) => e instanceof ApiError && e.code === 'chain_config_missing');
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
