import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { BANK_COUNTRIES, type BankCountry, type TEnvironmentConfig } from '../../config/environments';
import { ApiError } from '../requests/errors';
import type { Availability } from '../apps/modules';
import { checkStorable, InputError } from '../requests/validation';
import { isValidAbaRoutingNumber } from './aba-routing';
import { findDirectoryBank } from './bank-directory';

/**
 * What linking a bank account asks for, per country: one strict JSON Schema each. The requirements
 * endpoint publishes these objects and the link validates against the very same objects (compiled
 * once with ajv), so what a partner validates with is what the service enforces.
 */

/** Bumped whenever a published schema changes. */
export const REQUIREMENTS_VERSION = 2;

const DIRECTORY = '/v2/payments/external-bank/banks';

type JsonSchema = Record<string, unknown>;

function countrySchema(opts: {
  country: BankCountry;
  currency: string;
  accountNumber: { minLength: number; maxLength: number; pattern: string; description?: string };
  rail: JsonSchema;
  extra?: Record<string, JsonSchema>;
  extraRequired?: string[];
}): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['country', 'currency', 'accountHolderName', 'bankName', 'bankCode', ...(opts.extraRequired ?? []), 'accountNumber'],
    properties: {
      country: { const: opts.country },
      currency: { const: opts.currency },
      accountHolderName: { type: 'string', minLength: 1, maxLength: 160 },
      beneficiaryType: { type: 'string', enum: ['individual', 'business'], default: 'individual' },
      bankName: { type: 'string', minLength: 1, maxLength: 160 },
      bankCode: {
        type: 'string',
        minLength: 1,
        maxLength: 64,
        pattern: '^[A-Za-z0-9_-]+$',
        description: `A bankCode from GET ${DIRECTORY}?country=${opts.country}`,
      },
      ...opts.extra,
      accountNumber: { type: 'string', ...opts.accountNumber, writeOnly: true },
      rail: opts.rail,
    },
  };
}

export const BANK_ACCOUNT_SCHEMAS: Record<BankCountry, JsonSchema> = {
  // Exactly the spec's table.
  VN: countrySchema({
    country: 'VN',
    currency: 'VND',
    accountNumber: { minLength: 4, maxLength: 34, pattern: '^[0-9]{4,34}$' },
    rail: { const: 'bank_transfer', default: 'bank_transfer' },
  }),
  // ACH: a 9-digit ABA routing number (its check digit is verified by the service) and a 4-17 digit
  // account number (NACHA's DFI account number field is 17 characters).
  US: countrySchema({
    country: 'US',
    currency: 'USD',
    accountNumber: { minLength: 4, maxLength: 17, pattern: '^[0-9]{4,17}$' },
    rail: { const: 'ach', default: 'ach' },
    extra: {
      routingNumber: {
        type: 'string',
        minLength: 9,
        maxLength: 9,
        pattern: '^[0-9]{9}$',
        description: 'ABA routing transit number; its check digit must be valid',
      },
      accountType: { type: 'string', enum: ['checking', 'savings'], default: 'checking' },
    },
    extraRequired: ['routingNumber'],
  }),
  // Philippine bank account numbers are 10 to 13 digits at the large banks (BPI and LANDBANK 10,
  // BDO 10 or 12, UnionBank 12, Metrobank 13); 16 leaves room for the rest. InstaPay is real time up
  // to PHP 50,000; PESONet is batch with no such cap.
  PH: countrySchema({
    country: 'PH',
    currency: 'PHP',
    accountNumber: { minLength: 10, maxLength: 16, pattern: '^[0-9]{10,16}$' },
    rail: { type: 'string', enum: ['instapay', 'pesonet'], default: 'instapay' },
  }),
};

const COUNTRY_NAMES: Record<BankCountry, { name: string; currency: string }> = {
  US: { name: 'United States', currency: 'USD' },
  PH: { name: 'Philippines', currency: 'PHP' },
  VN: { name: 'Vietnam', currency: 'VND' },
};

/** Common payout countries the service does not link accounts in: listed so a partner sees a clear "no". */
const UNSUPPORTED_COUNTRIES = [
  { country: 'GB', name: 'United Kingdom', currency: 'GBP' },
  { country: 'MX', name: 'Mexico', currency: 'MXN' },
  { country: 'BR', name: 'Brazil', currency: 'BRL' },
  { country: 'IN', name: 'India', currency: 'INR' },
  { country: 'NG', name: 'Nigeria', currency: 'NGN' },
  { country: 'ID', name: 'Indonesia', currency: 'IDR' },
] as const;

export const BANK_COUNTRY_NAMES = COUNTRY_NAMES;

export function countryConfig(env: TEnvironmentConfig, country: BankCountry) {
  return env.bankAccounts?.countries.find((c) => c.country === country);
}

export function bankCountryEnabled(env: TEnvironmentConfig, country: BankCountry): boolean {
  return countryConfig(env, country)?.enabled === true;
}

/** Other ways to pay someone in a country: a stablecoin transfer to a connected wallet works everywhere. */
const ALTERNATIVES = ['connected_wallet'];

/**
 * A country the service links no accounts in: a strict schema (the country's identity, no other
 * field) that no body matches (`not: {}`), so validating before linking says no, as the link would.
 */
export function noLinkingSchema(country: string, currency: string): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['country', 'currency'],
    properties: { country: { const: country }, currency: { const: currency } },
    not: {},
    description: `Bank accounts are not linked in ${country}: no body is valid.`,
  };
}

/**
 * Every country, linked or not, with its schema. Where the bank accounts module is off for the app
 * (not entitled, or not operational in this deployment) every country is unavailable, the module's
 * disabledReason (as in the config's modules[]) its reason.
 */
export function bankAccountRequirements(env: TEnvironmentConfig, module: Availability, accountId: string) {
  const supported = BANK_COUNTRIES.map((country) => {
    const enabled = bankCountryEnabled(env, country);
    const available = module.available && enabled;
    return {
      country,
      name: COUNTRY_NAMES[country].name,
      currency: COUNTRY_NAMES[country].currency,
      implementation: 'offramp_provider',
      schema: BANK_ACCOUNT_SCHEMAS[country],
      alternatives: ALTERNATIVES,
      available,
      unavailableReason: available ? null : (module.disabledReason ?? 'not_enabled_for_environment'),
    };
  });
  const unsupported = UNSUPPORTED_COUNTRIES.map((c) => ({
    ...c,
    implementation: 'none',
    schema: noLinkingSchema(c.country, c.currency),
    alternatives: ALTERNATIVES,
    available: false,
    unavailableReason: 'country_not_supported',
  }));
  return { version: REQUIREMENTS_VERSION, accountId, countries: [...supported, ...unsupported] };
}

// strict: an unknown keyword in a published schema is a bug, caught at start-up.
const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true });
const VALIDATORS = Object.fromEntries(BANK_COUNTRIES.map((c) => [c, ajv.compile(BANK_ACCOUNT_SCHEMAS[c])])) as Record<
  BankCountry,
  ValidateFunction
>;

/** The bank fields of a link, as validated (defaults applied). */
export interface TBankFields {
  country: BankCountry;
  currency: string;
  accountHolderName: string;
  beneficiaryType: 'individual' | 'business';
  bankName: string;
  bankCode: string;
  accountNumber: string;
  rail: string;
  /** US */
  routingNumber?: string;
  accountType?: 'checking' | 'savings';
}

/** The fields beyond the common ones, stored in `details` and sent to the provider. */
export function countryDetails(fields: TBankFields): Record<string, string> {
  return fields.country === 'US' ? { routingNumber: fields.routingNumber!, accountType: fields.accountType! } : {};
}

type Field = { field: string; message: string };

function fieldOf(e: ErrorObject): Field {
  const path = e.instancePath.split('/').slice(1);
  if (e.keyword === 'required') return { field: ['body', ...path, String(e.params.missingProperty)].join('.'), message: 'Required' };
  if (e.keyword === 'additionalProperties') {
    return {
      field: ['body', ...path, String(e.params.additionalProperty)].join('.'),
      message: "Unknown field: not in the country's schema",
    };
  }
  return { field: ['body', ...path].join('.'), message: e.message ?? 'Invalid' };
}

/** One entry per field (a too-long number also misses the pattern: one field, both reasons). */
function badRequest(problems: Field[]): ApiError {
  const byField = new Map<string, string[]>();
  for (const p of problems) byField.set(p.field, [...(byField.get(p.field) ?? []), p.message]);
  const fields = [...byField].map(([field, messages]) => ({ field, message: [...new Set(messages)].join('; ') }));
  return new InputError(`Invalid body: ${fields.map((f) => f.field).join(', ')}`, fields);
}

/**
 * Validates a link body: storable text, a country the service links in and this environment enables,
 * the country's schema, a bankCode from the directory and (US) a routing number with a valid check digit.
 */
export function validateBankFields(env: TEnvironmentConfig, body: unknown): TBankFields {
  checkStorable(body, 'body');
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest([{ field: 'body', message: 'must be a JSON object' }]);
  const country = (body as { country?: unknown }).country;
  if (typeof country !== 'string' || !/^[A-Z]{2}$/.test(country)) {
    throw badRequest([{ field: 'body.country', message: 'Required: an ISO 3166-1 alpha-2 country code' }]);
  }
  if (!(BANK_COUNTRIES as readonly string[]).includes(country)) {
    throw new ApiError('payment_method_not_supported', `Bank accounts can't be linked in ${country}`, {
      country,
      reasonCode: 'country_not_supported',
    });
  }
  const bankCountry = country as BankCountry;
  if (!bankCountryEnabled(env, bankCountry)) {
    throw new ApiError('chain_config_missing', `Bank accounts in ${country} are not enabled for this environment`, {
      country,
      reasonCode: 'not_enabled_for_environment',
    });
  }
  const data: unknown = structuredClone(body);
  const validate = VALIDATORS[bankCountry];
  if (!validate(data)) throw badRequest((validate.errors ?? []).map(fieldOf));
  const fields = data as TBankFields;
  const problems: Field[] = [];
  if (!findDirectoryBank(bankCountry, fields.bankCode)) {
    problems.push({ field: 'body.bankCode', message: `not in the bank directory for ${country} (GET ${DIRECTORY}?country=${country})` });
  }
  if (fields.routingNumber !== undefined && !isValidAbaRoutingNumber(fields.routingNumber)) {
    problems.push({ field: 'body.routingNumber', message: 'not a valid ABA routing number (check digit)' });
  }
  if (problems.length > 0) throw badRequest(problems);
  return fields;
}
