import { publicPaymentPaths } from './public-payments';
import { z } from 'zod';
import { createDocument, type ZodOpenApiPathsObject } from 'zod-openapi';
import { accountPaths } from './accounts';
import { bankAccountPaths } from './bank-accounts';
import { clientPaths } from './client';
import { depositPaths } from './deposits';
import { eventPaths } from './events';
import { fundReturnPaths } from './fund-returns';
import { idempotencyKeyPaths } from './idempotency-keys';
import { headerComponents, operation, SECURITY_SCHEMES, svcVersionParameter, withUpstreamCodes, type OpenApiPaths } from './operation';
import { partnerConfigPaths } from './partner-config';
import { paymentPaths } from './payments';
import { providerCallbackPaths } from './provider-callbacks';
import { requestRules, withTextRule, type OfferedValues } from './request-rules';
import { sandboxPaths } from './sandbox';
import { transactionPaths } from './transactions';
import { vaultPaths } from './vaults';
import { ZAccountBundle } from '../../domain/accounts/account.schemas';
import { ZBankAccount } from '../../domain/bank-accounts/bank-account.schemas';
import { ZFinality } from '../../domain/chain/finality.schemas';
import { ZDeposit, ZDepositAddress } from '../../domain/deposits/deposit.schemas';
import { ZEvent } from '../../domain/event-log/event-log.schemas';
import { ZTransaction } from '../../domain/ledger/transactions.schemas';
import { ZPartnerConfig } from '../../domain/apps/partner-config.schemas';
import { ZPaymentOption } from '../../domain/payments/payment-option.schemas';
import { ZCheckout, ZNextAction, ZPayment } from '../../domain/payments/payment.schemas';
import { ZFundReturn } from '../../domain/returns/fund-return.schemas';
import { ZIdempotencyKeyView } from '../../domain/requests/idempotency-keys';
import { ZFundingOperation, ZVault, ZVaultPolicy } from '../../domain/vaults/vault.schemas';

/** The resources named once under components.schemas and referenced wherever they appear. */
const SCHEMAS = {
  PartnerConfig: ZPartnerConfig,
  AccountBundle: ZAccountBundle,
  Payment: ZPayment,
  NextAction: ZNextAction,
  Checkout: ZCheckout,
  PaymentOption: ZPaymentOption,
  FundingOperation: ZFundingOperation,
  FundReturn: ZFundReturn,
  Transaction: ZTransaction,
  DepositAddress: ZDepositAddress,
  Deposit: ZDeposit,
  Finality: ZFinality,
  Vault: ZVault,
  VaultPolicy: ZVaultPolicy,
  BankAccount: ZBankAccount,
  Event: ZEvent,
  IdempotencyKey: ZIdempotencyKeyView,
};

export const OPENAPI_PATH = '/v2/openapi/partners.json';

/** This document's own route (src/http/routes/openapi.ts). */
const openApiPaths: OpenApiPaths = {
  [OPENAPI_PATH]: {
    get: operation({
      operationId: 'getOpenApiDocument',
      summary: 'This document: the partner-facing API as OpenAPI 3.1',
      tags: ['Configuration'],
      auth: 'none',
      responses: {
        200: {
          description: 'The OpenAPI document.',
          schema: z.looseObject({ openapi: z.string(), paths: z.record(z.string(), z.unknown()) }),
        },
      },
    }),
  },
};

/**
 * Every partner-facing route file's paths, one entry per file (src/http/openapi/<route file>.ts). A
 * new route goes into its file's module; a new route file adds its module here. A test fails when a
 * route of the app is missing from the document, or the document names a route the app lacks.
 */
const PARTNER_PATHS: readonly OpenApiPaths[] = [
  openApiPaths,
  partnerConfigPaths,
  idempotencyKeyPaths,
  clientPaths,
  accountPaths,
  transactionPaths,
  paymentPaths,
  fundReturnPaths,
  depositPaths,
  vaultPaths,
  bankAccountPaths,
  eventPaths,
  sandboxPaths,
  providerCallbackPaths,
  publicPaymentPaths,
];

export interface OpenApiOptions {
  apiVersion: string;
  /** The environments' supportedApiVersions: the values Svc-Version may take. */
  supportedApiVersions: readonly string[];
  /** The service's public base URL (the document's server). */
  publicBaseUrl: string;
  /** The environments' chain ids, assets and fiat currencies, listed as the request fields' enums (absent: not listed). */
  offered?: OfferedValues;
}

function mergePaths(modules: readonly OpenApiPaths[]): ZodOpenApiPathsObject {
  const merged: ZodOpenApiPathsObject = {};
  for (const paths of modules) {
    for (const [path, item] of Object.entries(paths)) {
      const key = path as keyof ZodOpenApiPathsObject;
      const existing = merged[key];
      for (const method of Object.keys(item)) {
        if (existing && method in existing) throw new Error(`OpenAPI: ${method.toUpperCase()} ${path} is described twice`);
      }
      merged[key] = { ...existing, ...item };
    }
  }
  return merged;
}

export type OpenApiDocument = ReturnType<typeof createDocument>;

function build(options: OpenApiOptions): OpenApiDocument {
  const doc = createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: 'Partner Payments API',
        version: options.apiVersion,
        description:
          'UPAs (accounts), escrow Payments, deposits, vaults, bank accounts and the client API. Every response echoes `Svc-Version`; every error has the body `{error: {code, message, details?}}`. No request text (a value or an object key, in any field) may hold a NUL or an unpaired UTF-16 surrogate: 400. Chain ids, asset symbols and fiat currencies are listed as the environments offer them (sandbox and production together); one your app’s environment does not offer is refused with the status its operation documents (422 or 424, or 400 for a fiat currency). `RateLimit-*` headers describe the most constrained quota that counted the request; a 429 adds `Retry-After`. Operator routes (/admin/v1), the hosted checkout, health and metrics are not part of this document.',
      },
      servers: [{ url: options.publicBaseUrl }],
      tags: [
        { name: 'Configuration' },
        { name: 'Idempotency keys' },
        { name: 'Accounts' },
        { name: 'Balances and transactions' },
        { name: 'Payments' },
        { name: 'Refunds and incident recoveries' },
        { name: 'Deposits' },
        { name: 'Vaults' },
        { name: 'Bank accounts' },
        { name: 'Client API' },
        { name: 'Provider callbacks' },
      ],
      components: {
        securitySchemes: SECURITY_SCHEMES,
        schemas: SCHEMAS,
        parameters: { SvcVersion: svcVersionParameter(options.supportedApiVersions) },
        headers: headerComponents(options.supportedApiVersions),
      },
      paths: withUpstreamCodes(mergePaths(PARTNER_PATHS)),
    },
    { override: requestRules(options.offered) },
  );
  return withTextRule(doc);
}

const built = new Map<string, OpenApiDocument>();

/** The document, built once per (apiVersion, publicBaseUrl) and kept: it never changes while the process runs. */
export function partnersOpenApi(options: OpenApiOptions): OpenApiDocument {
  const key = JSON.stringify([options.apiVersion, options.supportedApiVersions, options.publicBaseUrl, options.offered ?? null]);
  let doc = built.get(key);
  if (!doc) {
    doc = build(options);
    built.set(key, doc);
  }
  return doc;
}
