import { Prisma, type PrismaClient } from '../../db/client';
import type { BankAccount } from '../../generated/prisma/client';
import type { TEnvironmentConfig } from '../../config/environments';
import type { AuthenticatedApp } from '../apps/apps';
import { ApiError, notFound, UpstreamFailure } from '../requests/errors';
import type { Availability } from '../apps/modules';
import { hmacHex } from '../../platform/secrets';
import { ID_PREFIXES } from '../values/ids';
import { sealText, openSealedText } from '../keys/sealed-text';
import { afterPosition, pageOf, type CursorCodec } from '../requests/pagination';
import { requireAccount } from '../deposits/deposit-addresses';
import { ProviderError, type OfframpProvider, type ProviderBankAccount } from '../../offramp/offramp-provider';
import { bankAccountRequirements, countryDetails, validateBankFields } from './bank-requirements';
import {
  decideBankAccount,
  initialBankAccountState,
  type BankAccountEvent,
  type BankAccountState,
  type BankAccountStatus,
} from './bank-account-machine';
import type { TBankAccount, TListBankAccountsQuery } from './bank-account.schemas';
import { currentKey, type ServiceSecret } from '../keys/service-keys';

export const ACCOUNT_NUMBER_LABEL = 'partner-payments/bank-account-number/v1';

/** The id a link with this Idempotency-Key gets, so a retry registers the same account with the provider. */
export function bankAccountIdFor(serviceSecret: ServiceSecret, appId: string, idempotencyKey: string): string {
  return `${ID_PREFIXES.bankAccount}${hmacHex(currentKey(serviceSecret), `bank-account-id:${appId}:${idempotencyKey}`).slice(0, 32)}`;
}

/** One real account (country, bank, routing, number) is linked at most once per account. */
function fingerprintOf(serviceSecret: ServiceSecret, accountId: string, parts: string[]): string {
  return hmacHex(currentKey(serviceSecret), `bank-account-fingerprint:${accountId}:${parts.join(':')}`);
}

/** The stored account number, opened (for the payout half). Throws when the row can't be decrypted. */
export function accountNumberOf(serviceSecret: ServiceSecret, row: Pick<BankAccount, 'id' | 'accountNumberEncrypted'>): string {
  const opened = openSealedText(serviceSecret, ACCOUNT_NUMBER_LABEL, row.id, row.accountNumberEncrypted);
  if (opened instanceof Error) throw new Error(`bank account ${row.id}: account number ${opened.message}`, { cause: opened });
  return opened;
}

export function toBankAccountView(row: BankAccount): TBankAccount {
  return {
    id: row.id,
    accountId: row.accountId,
    accountHolderName: row.accountHolderName,
    country: row.country,
    currency: row.currency,
    bankName: row.bankName,
    bankCode: row.bankCode,
    accountNumberLast4: row.accountNumberLast4,
    rail: row.rail,
    status: row.status as BankAccountStatus,
    verification: { version: row.verificationVersion, verifiedAt: row.verifiedAt?.toISOString() ?? null },
    disabledAt: row.disabledAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function stateOf(row: BankAccount): BankAccountState {
  return {
    status: row.status as BankAccountStatus,
    statusVersion: row.statusVersion,
    verificationVersion: row.verificationVersion,
    verifiedAt: row.verifiedAt,
    disabledAt: row.disabledAt,
    failureReason: row.failureReason,
  };
}

const isUniqueViolation = (err: unknown) => err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002';

function duplicate(bankAccountId: string): ApiError {
  return new ApiError('conflict', 'This bank account is already linked to the account', {
    reasonCode: 'bank_account_already_linked',
    bankAccountId,
  });
}

export interface LinkDeps {
  prisma: PrismaClient;
  serviceSecret: ServiceSecret;
  /** Absent: no off-ramp provider in this deployment, so linking is not configured (424). */
  provider: OfframpProvider | undefined;
}

/**
 * Links a bank account: validates the body against the country's schema, registers the account with
 * the off-ramp provider (keyed by the bank account id, derived from the Idempotency-Key, so a retry
 * registers the same account), and only then stores it, number encrypted. A provider refusal or
 * outage creates nothing.
 */
export async function linkBankAccount(
  deps: LinkDeps,
  app: AuthenticatedApp,
  env: TEnvironmentConfig,
  accountId: string,
  body: unknown,
  idempotencyKey: string,
): Promise<{ bankAccount: TBankAccount }> {
  const { prisma } = deps;
  await requireAccount(prisma, app.id, accountId);
  const fields = validateBankFields(env, body);
  const provider = deps.provider;
  // The bank_accounts module's guard answered 424 where the deployment has no provider for the environment.
  if (!provider) throw new Error('linkBankAccount reached without an off-ramp provider');
  const id = bankAccountIdFor(deps.serviceSecret, app.id, idempotencyKey);
  // A retry of a link that was stored but whose answer was lost (its key released by a 5xx).
  const existing = await prisma.bankAccount.findFirst({ where: { id, appId: app.id, accountId } });
  if (existing) return { bankAccount: toBankAccountView(existing) };

  const details = countryDetails(fields);
  const fingerprint = fingerprintOf(deps.serviceSecret, accountId, [
    fields.country,
    fields.bankCode,
    details.routingNumber ?? '',
    fields.accountNumber,
  ]);
  const linked = await prisma.bankAccount.findFirst({ where: { accountId, fingerprint }, select: { id: true } });
  if (linked) throw duplicate(linked.id);

  let registered: ProviderBankAccount;
  try {
    registered = await provider.registerBankAccount({
      bankAccountId: id,
      country: fields.country,
      currency: fields.currency,
      accountHolderName: fields.accountHolderName,
      beneficiaryType: fields.beneficiaryType,
      bankCode: fields.bankCode,
      accountNumber: fields.accountNumber,
      rail: fields.rail,
      details,
    });
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    // Only the provider's kind and code go out: its message may echo what it was sent.
    if (err.kind === 'unavailable')
      throw new UpstreamFailure('unavailable', 'The bank account provider is unavailable; retry with the same Idempotency-Key');
    throw new UpstreamFailure('error', 'The bank account provider refused the account', { providerCode: err.providerCode });
  }

  let row: BankAccount;
  try {
    row = await prisma.bankAccount.create({
      data: {
        id,
        appId: app.id,
        accountId,
        country: fields.country,
        currency: fields.currency,
        accountHolderName: fields.accountHolderName,
        beneficiaryType: fields.beneficiaryType,
        bankName: fields.bankName,
        bankCode: fields.bankCode,
        details,
        accountNumberEncrypted: sealText(deps.serviceSecret, ACCOUNT_NUMBER_LABEL, id, fields.accountNumber),
        accountNumberLast4: fields.accountNumber.slice(-4),
        fingerprint,
        rail: fields.rail,
        ...initialBankAccountState(),
        providerCode: provider.code,
        providerAccountId: registered.providerAccountId,
      },
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const raced = await prisma.bankAccount.findFirst({ where: { accountId, fingerprint } });
    if (raced?.id === id) return { bankAccount: toBankAccountView(raced) };
    throw duplicate(raced?.id ?? id);
  }
  // The provider may already know the outcome (it answered verified or failed at once).
  const updated = await applyProviderBankAccountUpdate(prisma, id, registered);
  return { bankAccount: toBankAccountView(updated ?? row) };
}

/** Answers for the module on or off (spec: every country not offered is available false with a reason). */
export async function bankAccountRequirementsOf(
  prisma: PrismaClient,
  app: AuthenticatedApp,
  env: TEnvironmentConfig,
  module: Availability,
  accountId: string,
) {
  await requireAccount(prisma, app.id, accountId);
  return bankAccountRequirements(env, module, accountId);
}

export async function getBankAccount(prisma: PrismaClient, app: AuthenticatedApp, accountId: string, bankAccountId: string) {
  await requireAccount(prisma, app.id, accountId);
  const row = await prisma.bankAccount.findFirst({ where: { id: bankAccountId, accountId, appId: app.id } });
  if (!row) throw notFound('Bank account');
  return { bankAccount: toBankAccountView(row) };
}

export async function listBankAccounts(
  prisma: PrismaClient,
  app: AuthenticatedApp,
  accountId: string,
  query: TListBankAccountsQuery,
  cursors: CursorCodec,
) {
  await requireAccount(prisma, app.id, accountId);
  const scope = `bank-accounts:${app.id}:${accountId}:${query.status ?? ''}`;
  const position = query.cursor ? cursors.decode(scope, query.cursor) : undefined;
  const filters: Prisma.BankAccountWhereInput = { accountId, ...(query.status ? { status: query.status } : {}) };
  const rows = await prisma.bankAccount.findMany({
    where: { AND: [filters, afterPosition(position)] },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: query.limit + 1,
  });
  const page = pageOf(rows, query.limit, cursors, scope);
  return { accountId, bankAccounts: page.items.map(toBankAccountView), nextCursor: page.nextCursor };
}

/**
 * Applies one machine event to a stored account, conditional on the statusVersion it read, so a race
 * loses cleanly (and is re-decided on a fresh read). Returns the row after, or the refusal.
 */
async function applyEvent(
  prisma: PrismaClient,
  where: { id: string; appId?: string },
  event: BankAccountEvent,
  extra: { providerAccountId?: string } = {},
) {
  for (;;) {
    const row = await prisma.bankAccount.findFirst({ where });
    if (!row) return null;
    const decision = decideBankAccount(stateOf(row), event);
    if (decision.kind === 'unchanged') return { row };
    if (decision.kind === 'refused') return { row, refused: decision.reason };
    const { count } = await prisma.bankAccount.updateMany({
      where: { id: row.id, statusVersion: row.statusVersion },
      data: {
        ...decision.state,
        ...(row.providerAccountId === null && extra.providerAccountId ? { providerAccountId: extra.providerAccountId } : {}),
        updatedAt: event.at,
      },
    });
    if (count === 1) return { row: await prisma.bankAccount.findUniqueOrThrow({ where: { id: row.id } }) };
  }
}

/**
 * The provider's word on a registered account (its answer to a read when a callback named it, or at
 * registration): moves the account through the machine. Idempotent: a repeated or stale update changes nothing
 * (a late "verified" after a failure or a disable is ignored). Null when no such account exists.
 */
export async function applyProviderBankAccountUpdate(
  prisma: PrismaClient,
  bankAccountId: string,
  account: ProviderBankAccount,
): Promise<BankAccount | null> {
  const at = new Date();
  if (account.status === 'pending') return prisma.bankAccount.findUnique({ where: { id: bankAccountId } });
  const event: BankAccountEvent =
    account.status === 'verified' ? { type: 'verified', at } : { type: 'verification_failed', at, reason: account.failureReason };
  const result = await applyEvent(prisma, { id: bankAccountId }, event, { providerAccountId: account.providerAccountId });
  return result?.row ?? null;
}

/**
 * The callback route's handler (ApiDeps.offramp.onBankAccountUpdated), given the provider's answer.
 * The link registers before it inserts, so a callback can beat the link's own write: an unknown id of
 * the service's own form throws, the route answers 503 and the provider sends it again. Any other
 * unknown id is not ours.
 */
export function onProviderBankAccountUpdated(prisma: PrismaClient) {
  return async (bankAccountId: string, account: ProviderBankAccount): Promise<void> => {
    const row = await applyProviderBankAccountUpdate(prisma, bankAccountId, account);
    if (!row && bankAccountId.startsWith(ID_PREFIXES.bankAccount)) throw new Error(`bank account ${bankAccountId} is not stored (yet)`);
  };
}

/** The partner removes a bank account as a payout destination; disabling twice answers the same account. */
export async function disableBankAccount(prisma: PrismaClient, app: AuthenticatedApp, accountId: string, bankAccountId: string) {
  await requireAccount(prisma, app.id, accountId);
  const exists = await prisma.bankAccount.findFirst({ where: { id: bankAccountId, accountId, appId: app.id }, select: { id: true } });
  if (!exists) throw notFound('Bank account');
  const result = await applyEvent(prisma, { id: bankAccountId, appId: app.id }, { type: 'disable', at: new Date() });
  if (!result) throw notFound('Bank account');
  return { bankAccount: toBankAccountView(result.row) };
}
