import { Prisma, type PrismaClient } from '../../db/client';
import { notFound } from '../requests/errors';
import type { TBalance, TBalances } from './balances.schemas';

type Db = PrismaClient | Prisma.TransactionClient;

interface BalanceRow {
  account_id: string;
  chain_id: number;
  token_address: string;
  symbol: string;
  decimals: number;
  settled: string;
  pending: string;
}

/**
 * The balances of the given accounts (all attributed accounts when omitted), per asset, from the
 * journal: settled = entries on the account's `upa:<accountId>:settled` book, pending = its other
 * attributed entries. Assets the account's books never touched are absent. Ordered by chainId, token.
 */
export async function projectBalances(db: Db, accountIds?: string[]): Promise<Map<string, TBalance[]>> {
  const where = accountIds ? Prisma.sql`account_id = ANY(${accountIds}::text[])` : Prisma.sql`account_id IS NOT NULL`;
  const rows = await db.$queryRaw<BalanceRow[]>`
    SELECT account_id, chain_id, token_address, min(asset_symbol) AS symbol, min(decimals) AS decimals,
      coalesce(sum(amount_atomic) FILTER (WHERE book = 'upa:' || account_id || ':settled'), 0)::text AS settled,
      coalesce(sum(amount_atomic) FILTER (WHERE book <> 'upa:' || account_id || ':settled'), 0)::text AS pending
    FROM ledger_entries WHERE ${where}
    GROUP BY account_id, chain_id, token_address
    ORDER BY account_id, chain_id, token_address`;
  const out = new Map<string, TBalance[]>();
  for (const id of accountIds ?? []) out.set(id, []);
  for (const r of rows) {
    const settled = BigInt(r.settled);
    const pending = BigInt(r.pending);
    const list = out.get(r.account_id) ?? [];
    list.push({
      asset: { chainId: Number(r.chain_id), tokenAddress: r.token_address, symbol: r.symbol, decimals: Number(r.decimals), kind: 'token' },
      settledAtomic: settled.toString(),
      pendingAtomic: pending.toString(),
      totalAtomic: (settled + pending).toString(),
    });
    out.set(r.account_id, list);
  }
  return out;
}

/** GET /v2/accounts/{accountId}/balances: another app's account is 404. */
export async function getAccountBalances(db: Db, appId: string, accountId: string): Promise<TBalances> {
  const account = await db.account.findFirst({ where: { id: accountId, appId }, select: { id: true } });
  if (!account) throw notFound('Account');
  const balances = await projectBalances(db, [accountId]);
  return { accountId, balances: balances.get(accountId) ?? [] };
}
