import { z } from 'zod';

const ZIsoDate = z.iso.datetime();

/** One transaction's place on chain, as the chain scanner last read it (src/domain/chain/pure/finality.ts). */
export const ZTransactionFinality = z.strictObject({
  chainId: z.number().int(),
  transactionHash: z.string(),
  /** The block the scanner last read it in; null while not mined (or after a reorg took it away). */
  blockNumber: z.number().int().nullable(),
  /** Blocks on top of blockNumber, its own included, up to the scanner's head: 0 while not mined. */
  confirmations: z.number().int().min(0),
  /** The network's confirmation depth. */
  confirmationsRequired: z.number().int().min(1),
  finalized: z.boolean(),
  /** When confirmationsRequired is reached at the network's measured block time; null once finalized or while not mined. */
  estimatedFinalAt: ZIsoDate.nullable(),
});
export type TTransactionFinality = z.infer<typeof ZTransactionFinality>;

/** Where a resource's money stands on chain: each incoming transfer, and each settlement leg (the live ones). */
export const ZFinality = z.strictObject({
  transfers: z.array(ZTransactionFinality),
  settlement: z.array(ZTransactionFinality.extend({ leg: z.enum(['net', 'platform_fee', 'partner_fee']) })),
});
export type TFinality = z.infer<typeof ZFinality>;

/** Nothing on chain yet (a Payment just created). */
export const NO_FINALITY: TFinality = { transfers: [], settlement: [] };
