import { getAddress } from 'viem';
import { Prisma, type PrismaClient } from '../../db/client';
import type { Account } from '../../generated/prisma/client';
import type { TEnvironmentConfig } from '../../config/environments';
import { findAsset, findNetwork } from '../../config/environments';
import { ApiError, notFound } from '../requests/errors';
import type { AuthenticatedApp } from '../apps/apps';
import { writeEvents, type EventSubject } from '../event-log/events';
import { DESTINATION_REFUSAL_MESSAGES, destinationRefusal } from '../chain/custody-addresses';
import type { AddressBook } from '../../custody';
import { newId, randomToken } from '../values/ids';
import { BUNDLE_INCLUDE, loadAccount, toAccountBundle } from './account-bundle';
import type {
  TAccountBundle,
  TAccountCapabilities,
  TCreateAccount,
  TRegisterConnectedWallet,
  TSetSettlementProfile,
  TUpdateDisplayProfile,
  TUpdatePaymentAcceptance,
} from './account.schemas';

function isUniqueViolation(err: unknown): boolean {
  return err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002';
}

/** Creates a UPA with its payment handle; account.created is written in the same transaction. */
export async function createAccount(prisma: PrismaClient, app: AuthenticatedApp, input: TCreateAccount): Promise<TAccountBundle> {
  const accountId = newId('account');
  try {
    const account = await prisma.$transaction(async (tx) => {
      const created = await tx.account.create({
        data: {
          id: accountId,
          appId: app.id,
          externalUserId: input.externalUserId,
          subjectType: input.subjectType,
          status: 'active',
          metadata: input.metadata as Prisma.InputJsonValue,
          paymentHandle: {
            create: { id: newId('handle'), namespace: app.id, handle: randomToken(12).toLowerCase(), status: 'active' },
          },
        },
        include: BUNDLE_INCLUDE,
      });
      await writeEvents(tx, accountSubject(app, accountId), 'created', [
        { name: 'account.created', payload: { accountId, externalUserId: input.externalUserId } },
      ]);
      return created;
    });
    return toAccountBundle(account);
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const existing = await prisma.account.findUnique({
      where: { appId_externalUserId: { appId: app.id, externalUserId: input.externalUserId } },
      select: { id: true },
    });
    throw new ApiError('account_already_exists', 'An account with this externalUserId already exists', {
      accountId: existing?.id ?? null,
    });
  }
}

/**
 * Optimistic concurrency: the update only applies where the stored version still equals
 * expectedVersion, so of two concurrent updates exactly one wins and the other gets 409.
 */
export async function updateDisplayProfile(
  prisma: PrismaClient,
  app: AuthenticatedApp,
  accountId: string,
  input: TUpdateDisplayProfile,
): Promise<TAccountBundle> {
  const account = await prisma.$transaction(async (tx) => {
    const { count } = await tx.account.updateMany({
      where: { id: accountId, appId: app.id, displayProfileVersion: input.expectedVersion },
      data: {
        displayName: input.displayName,
        logoUrl: input.logoUrl ?? null,
        displayProfileVersion: { increment: 1 },
        updatedAt: new Date(),
      },
    });
    if (count === 0) await refuseStaleVersion(tx, app, accountId, 'display profile', input.expectedVersion, (a) => a.displayProfileVersion);
    await tx.displayProfileRevision.create({
      data: {
        accountId,
        version: input.expectedVersion + 1,
        displayName: input.displayName,
        logoUrl: input.logoUrl ?? null,
        reason: input.reason,
      },
    });
    await writeEvents(tx, accountSubject(app, accountId), `display_profile:v${input.expectedVersion + 1}`, [
      { name: 'account.updated', payload: { accountId, change: 'display_profile', version: input.expectedVersion + 1 } },
    ]);
    return loadAccount(tx, app.id, accountId);
  });
  return toAccountBundle(account);
}

/**
 * Why a conditional update on (account, expectedVersion) matched no row: the account is not the
 * app's (404), or another change came first (409 with the current version).
 */
async function refuseStaleVersion(
  tx: Prisma.TransactionClient,
  app: AuthenticatedApp,
  accountId: string,
  what: string,
  expectedVersion: number,
  versionOf: (a: Account) => number,
): Promise<never> {
  const current = await tx.account.findFirst({ where: { id: accountId, appId: app.id } });
  if (!current) throw notFound('Account');
  throw new ApiError('version_conflict', `The ${what} changed since expectedVersion; re-read the account and retry`, {
    expectedVersion,
    currentVersion: versionOf(current),
  });
}

/**
 * Turns receiving public Payments on or off (POST /v2/public/apps/{appId}/payments names the account
 * by its payment handle). Conditional on expectedVersion like the display profile; every accepted
 * change, even to the same value, is a new version and an account.updated event.
 */
export async function updatePaymentAcceptance(
  prisma: PrismaClient,
  app: AuthenticatedApp,
  accountId: string,
  input: TUpdatePaymentAcceptance,
): Promise<TAccountBundle> {
  const version = input.expectedVersion + 1;
  const account = await prisma.$transaction(async (tx) => {
    const { count } = await tx.account.updateMany({
      where: { id: accountId, appId: app.id, paymentAcceptanceVersion: input.expectedVersion },
      // Incremented in SQL: computed here, a stale expectedVersion at int4's maximum would be a value no row can hold.
      data: { publicReceiveEnabled: input.publicReceiveEnabled, paymentAcceptanceVersion: { increment: 1 }, updatedAt: new Date() },
    });
    if (count === 0)
      await refuseStaleVersion(tx, app, accountId, 'payment acceptance', input.expectedVersion, (a) => a.paymentAcceptanceVersion);
    await writeEvents(tx, accountSubject(app, accountId), `payment_acceptance:v${version}`, [
      {
        name: 'account.updated',
        payload: { accountId, change: 'payment_acceptance', version, publicReceiveEnabled: input.publicReceiveEnabled },
      },
    ]);
    return loadAccount(tx, app.id, accountId);
  });
  return toAccountBundle(account);
}

/** Registers an EVM wallet the account holder controls. Ownership starts unverified. */
export async function registerConnectedWallet(
  prisma: PrismaClient,
  custody: AddressBook,
  app: AuthenticatedApp,
  env: TEnvironmentConfig,
  accountId: string,
  input: TRegisterConnectedWallet,
): Promise<TAccountBundle> {
  await loadAccount(prisma, app.id, accountId);
  const network = findNetwork(env, input.chainId);
  if (!network) {
    throw new ApiError('chain_config_missing', `Chain ${input.chainId} is not configured for this environment`);
  }
  // Checksummed by the schema; uniqueness ignores case (index on lower(address)), as do the checks.
  const address = input.address;
  await requirePayableAddress(prisma, custody, address, tokenContractsOf(network), 'body.address');
  try {
    const walletId = newId('wallet');
    await prisma.$transaction(async (tx) => {
      await tx.connectedWallet.create({
        data: {
          id: walletId,
          accountId,
          kind: input.kind,
          chainId: input.chainId,
          address,
          label: input.label ?? null,
          status: 'active',
          ownershipVerificationStatus: 'unverified',
          ownershipVerificationMethod: 'eip712_signature',
        },
      });
      await accountUpdated(tx, app, accountId, 'connected_wallet_added', walletId);
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    throw new ApiError('conflict', 'This wallet is already connected to the account');
  }
  return toAccountBundle(await loadAccount(prisma, app.id, accountId));
}

/**
 * Makes a connected wallet the account's settlement destination. Each change is a new version with a
 * new settlementDestinationId and a snapshot; Payments copy the snapshot they were created with.
 */
export async function setSettlementProfile(
  prisma: PrismaClient,
  custody: AddressBook,
  app: AuthenticatedApp,
  env: TEnvironmentConfig,
  accountId: string,
  input: TSetSettlementProfile,
): Promise<TAccountBundle> {
  const account = await loadAccount(prisma, app.id, accountId);
  const wallet = account.connectedWallets.find((w) => w.id === input.connectedWalletId && w.status === 'active');
  if (!wallet) throw notFound('Connected wallet');
  const network = findNetwork(env, wallet.chainId);
  if (!network) throw new ApiError('chain_config_missing', `Chain ${wallet.chainId} is not configured for this environment`);
  // A wallet registered before this check existed may still be one of the service's own addresses.
  await requirePayableAddress(prisma, custody, wallet.address, tokenContractsOf(network), 'body.connectedWalletId');
  // Wallets registered before checksumming are stored lowercase; the new profile version is checksummed.
  const destinationAddress = getAddress(wallet.address);
  const assetSymbol = input.assetSymbol ?? network.defaultAsset;
  const asset = findAsset(network, assetSymbol);
  if (!asset) {
    throw new ApiError('payment_method_not_supported', `Asset ${assetSymbol} is not supported on chain ${wallet.chainId}`);
  }
  const previous = account.settlementProfile;
  const version = (previous?.version ?? 0) + 1;
  const settlementDestinationId = newId('settlementDestination');
  const snapshot = {
    settlementDestinationId,
    destinationType: 'connected_wallet',
    connectedWalletId: wallet.id,
    chainId: wallet.chainId,
    destinationAddress,
    assetSymbol: asset.symbol,
    tokenAddress: asset.tokenAddress,
    decimals: asset.decimals,
    version,
    capturedAt: new Date().toISOString(),
  };
  const data = {
    version,
    connectedWalletId: wallet.id,
    settlementDestinationId,
    status: 'active',
    destinationType: 'connected_wallet',
    chainId: wallet.chainId,
    destinationAddress,
    assetSymbol: asset.symbol,
    tokenAddress: asset.tokenAddress,
    snapshot,
  };
  await prisma.$transaction(async (tx) => {
    if (previous) {
      // Conditional on the version read above, so two concurrent changes can't both apply.
      const { count } = await tx.settlementProfile.updateMany({ where: { id: previous.id, version: previous.version }, data });
      if (count === 0) throw new ApiError('version_conflict', 'The settlement profile changed concurrently; retry');
    } else {
      await tx.settlementProfile.create({ data: { id: newId('settlementProfile'), accountId, ...data } });
    }
    await accountUpdated(tx, app, accountId, 'settlement_profile', `v${version}`);
  });
  return toAccountBundle(await loadAccount(prisma, app.id, accountId));
}

export async function accountCapabilities(
  prisma: PrismaClient,
  app: AuthenticatedApp,
  env: TEnvironmentConfig,
  accountId: string,
): Promise<TAccountCapabilities> {
  const account = await loadAccount(prisma, app.id, accountId);
  const active = account.status === 'active';
  const settled = account.settlementProfile?.status === 'active';
  const paymentsOn = env.modules.includes('payments') && app.scopes.includes('v2:payments');
  const depositsOn = env.modules.includes('deposit_addresses') && app.scopes.includes('v2:deposit_addresses');
  const reason = (ok: boolean, why: string) => (ok ? null : why);
  return {
    accountId,
    capabilities: {
      receivePayments: {
        available: active && paymentsOn && settled,
        disabledReason: !paymentsOn ? 'module_not_available' : reason(settled, 'settlement_profile_missing'),
      },
      sendPayments: { available: active && paymentsOn, disabledReason: reason(paymentsOn, 'module_not_available') },
      depositAddresses: {
        available: active && depositsOn && settled,
        disabledReason: !depositsOn ? 'module_not_available' : reason(settled, 'settlement_profile_missing'),
      },
      connectedWallets: { available: active, supportedChainIds: env.networks.map((n) => n.chainId) },
      settlement: { configured: settled, settlementProfileId: account.settlementProfile?.id ?? null },
    },
  };
}

/** Paying out to one of the service's own addresses would credit the account again with its own money. */
const tokenContractsOf = (network: NonNullable<ReturnType<typeof findNetwork>>) => network.assets.map((a) => a.tokenAddress);

/** The one destination rule (custody-addresses.ts): a payout address that would lose the money is refused. */
async function requirePayableAddress(
  prisma: PrismaClient,
  custody: AddressBook,
  address: string,
  tokens: string[],
  field: string,
): Promise<void> {
  const refused = await destinationRefusal(prisma, custody, address, tokens);
  if (!refused) return;
  const message = DESTINATION_REFUSAL_MESSAGES[refused];
  throw new ApiError('bad_request', message, { reasonCode: refused, fields: [{ field, message }] });
}

function accountSubject(app: AuthenticatedApp, accountId: string): EventSubject {
  return { appId: app.id, apiVersion: app.apiVersion, accountId, resourceType: 'account', resourceId: accountId };
}

/** account.updated for a change of one of the account's parts; `version` names that change. */
async function accountUpdated(tx: Prisma.TransactionClient, app: AuthenticatedApp, accountId: string, change: string, version: string) {
  await tx.account.update({ where: { id: accountId }, data: { updatedAt: new Date() } });
  await writeEvents(tx, accountSubject(app, accountId), `${change}:${version}`, [
    { name: 'account.updated', payload: { accountId, change } },
  ]);
}
