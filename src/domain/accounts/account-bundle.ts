import type { Prisma, PrismaClient } from '../../db/client';
import { notFound } from '../requests/errors';
import type { TAccountBundle } from './account.schemas';

export const BUNDLE_INCLUDE = {
  paymentHandle: true,
  connectedWallets: { orderBy: { createdAt: 'asc' } },
  settlementProfile: true,
} as const satisfies Prisma.AccountInclude;

export type AccountWithParts = Prisma.AccountGetPayload<{ include: typeof BUNDLE_INCLUDE }>;

type Db = PrismaClient | Prisma.TransactionClient;

/** Reads an account of the given app; another app's account is "not found". */
export async function loadAccount(db: Db, appId: string, accountId: string): Promise<AccountWithParts> {
  const account = await db.account.findFirst({ where: { id: accountId, appId }, include: BUNDLE_INCLUDE });
  if (!account) throw notFound('Account');
  return account;
}

export async function loadAccountByExternalUserId(db: Db, appId: string, externalUserId: string): Promise<AccountWithParts> {
  const account = await db.account.findUnique({
    where: { appId_externalUserId: { appId, externalUserId } },
    include: BUNDLE_INCLUDE,
  });
  if (!account) throw notFound('Account');
  return account;
}

export function toAccountBundle(a: AccountWithParts): TAccountBundle {
  const profile = a.settlementProfile;
  return {
    account: {
      id: a.id,
      externalUserId: a.externalUserId,
      subjectType: a.subjectType,
      status: a.status,
      paymentAcceptance: { publicReceiveEnabled: a.publicReceiveEnabled, version: a.paymentAcceptanceVersion },
      metadata: a.metadata as Record<string, unknown>,
      createdAt: a.createdAt.toISOString(),
      updatedAt: a.updatedAt.toISOString(),
    },
    displayProfile: { displayName: a.displayName, logoUrl: a.logoUrl, version: a.displayProfileVersion },
    paymentHandle: a.paymentHandle
      ? {
          id: a.paymentHandle.id,
          accountId: a.paymentHandle.accountId,
          namespace: a.paymentHandle.namespace,
          handle: a.paymentHandle.handle,
          status: a.paymentHandle.status,
          createdAt: a.paymentHandle.createdAt.toISOString(),
          updatedAt: a.paymentHandle.updatedAt.toISOString(),
        }
      : null,
    connectedWallets: a.connectedWallets.map((w) => ({
      id: w.id,
      accountId: w.accountId,
      kind: 'evm' as const,
      chainId: w.chainId,
      address: w.address,
      label: w.label,
      status: w.status,
      ownershipVerificationStatus: w.ownershipVerificationStatus,
      ownershipVerificationMethod: w.ownershipVerificationMethod,
      settlementProfileId: profile && profile.connectedWalletId === w.id ? profile.id : null,
      createdAt: w.createdAt.toISOString(),
      updatedAt: w.updatedAt.toISOString(),
    })),
    settlementProfile: profile
      ? {
          id: profile.id,
          accountId: profile.accountId,
          version: profile.version,
          connectedWalletId: profile.connectedWalletId,
          settlementDestinationId: profile.settlementDestinationId,
          status: profile.status,
          destinationType: profile.destinationType,
          chainId: profile.chainId,
          destinationAddress: profile.destinationAddress,
          assetSymbol: profile.assetSymbol,
          tokenAddress: profile.tokenAddress,
          snapshot: profile.snapshot as Record<string, unknown>,
        }
      : null,
  };
}
