import { z } from 'zod';
import { ZAccountId } from '../accounts/account.schemas';
import { ZLedgerAssetView, ZSignedAtomic } from './transactions.schemas';

/**
 * One asset's balance of a UPA, projected from the journal (never a live wallet balance):
 * settledAtomic = what was paid out to the account's settlement destination (book upa:<id>:settled);
 * pendingAtomic = what the service holds in the account's other books (escrow, deposit custody) and has
 * not settled out yet; totalAtomic = settled + pending = the sum of every entry attributed to the account.
 */
export const ZBalance = z.strictObject({
  asset: ZLedgerAssetView,
  settledAtomic: ZSignedAtomic,
  pendingAtomic: ZSignedAtomic,
  totalAtomic: ZSignedAtomic,
});
export type TBalance = z.output<typeof ZBalance>;

/** GET /v2/accounts/{accountId}/balances */
export const ZBalances = z.strictObject({ accountId: ZAccountId, balances: z.array(ZBalance) });
export type TBalances = z.output<typeof ZBalances>;
