import { z } from 'zod';

/** An amount of a token on a chain, as a refund, a recovery or a vault's spend shows it. */
export const ZTokenAmount = z.strictObject({
  amount: z.string(),
  amountAtomic: z.string(),
  assetCode: z.string(),
  decimals: z.number().int(),
  chainId: z.number().int(),
  tokenAddress: z.string(),
});
