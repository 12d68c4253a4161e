import type { PrismaClient } from '../../db/client';
import { ACCOUNT_NUMBER_LABEL } from '../bank-accounts/bank-accounts';
import { openSealedText, sealedUnderCurrentKey, sealText } from './sealed-text';
import { currentKey, keyIdOf, type ServiceSecret } from './service-keys';
import { SIGNING_SECRET_LABEL } from '../webhooks/signing-secrets';

/**
 * `npm run cli -- keys reseal`: moves every sealed column to the keyring's current key, so the
 * previous keys can be dropped. Each row is opened under whichever accepted key sealed it and sealed
 * again under the current one; a row already under the current key is left alone; the write only
 * lands if the row still holds what was read (a concurrent rotation of a webhook secret wins).
 * Rows no accepted key opens are listed, never changed.
 */
interface SealedColumn {
  name: string;
  label: string;
  page(prisma: PrismaClient, afterId: string, take: number): Promise<Array<{ id: string; sealed: string }>>;
  replace(prisma: PrismaClient, id: string, from: string, to: string): Promise<number>;
}

const SEALED_COLUMNS: readonly SealedColumn[] = [
  {
    name: 'webhook_endpoints.secret_ciphertext',
    label: SIGNING_SECRET_LABEL,
    page: async (prisma, afterId, take) =>
      (
        await prisma.webhookEndpoint.findMany({
          where: { id: { gt: afterId } },
          orderBy: { id: 'asc' },
          take,
          select: { id: true, secretCiphertext: true },
        })
      ).map((r) => ({ id: r.id, sealed: r.secretCiphertext })),
    replace: async (prisma, id, from, to) =>
      (await prisma.webhookEndpoint.updateMany({ where: { id, secretCiphertext: from }, data: { secretCiphertext: to } })).count,
  },
  {
    name: 'bank_accounts.account_number_encrypted',
    label: ACCOUNT_NUMBER_LABEL,
    page: async (prisma, afterId, take) =>
      (
        await prisma.bankAccount.findMany({
          where: { id: { gt: afterId } },
          orderBy: { id: 'asc' },
          take,
          select: { id: true, accountNumberEncrypted: true },
        })
      ).map((r) => ({ id: r.id, sealed: r.accountNumberEncrypted })),
    replace: async (prisma, id, from, to) =>
      (await prisma.bankAccount.updateMany({ where: { id, accountNumberEncrypted: from }, data: { accountNumberEncrypted: to } })).count,
  },
];

export interface ResealReport {
  currentKeyId: string;
  columns: Array<{ column: string; resealed: number; alreadyCurrent: number; unreadable: string[] }>;
}

const PAGE = 500;

async function resealColumn(prisma: PrismaClient, keys: ServiceSecret, column: SealedColumn): Promise<ResealReport['columns'][number]> {
  const result = { column: column.name, resealed: 0, alreadyCurrent: 0, unreadable: [] as string[] };
  for (let afterId = ''; ;) {
    const rows = await column.page(prisma, afterId, PAGE);
    for (const row of rows) {
      if (sealedUnderCurrentKey(keys, row.sealed)) {
        result.alreadyCurrent += 1;
        continue;
      }
      const opened = openSealedText(keys, column.label, row.id, row.sealed);
      if (opened instanceof Error) result.unreadable.push(row.id);
      else result.resealed += await column.replace(prisma, row.id, row.sealed, sealText(keys, column.label, row.id, opened));
    }
    if (rows.length < PAGE) return result;
    afterId = rows[rows.length - 1]!.id;
  }
}

export async function resealAll(prisma: PrismaClient, keys: ServiceSecret): Promise<ResealReport> {
  const columns = [];
  for (const column of SEALED_COLUMNS) columns.push(await resealColumn(prisma, keys, column));
  return { currentKeyId: keyIdOf(currentKey(keys)), columns };
}
