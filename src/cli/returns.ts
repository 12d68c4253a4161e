import { resolveFromCli } from './holds';

import type { Register } from './shared';

const USAGE_RESOLVE =
  'usage: fund-returns resolve <refund_…|recovery_…> --action retry|mark-settled|fail [--tx <hash>] [--reason <text>] [--actor <who>]';

/**
 *   fund-returns resolve <returnId> --action retry|mark-settled|fail [--tx <hash>] [--reason <text>] [--actor <who>]
 *       releases a requires_intervention refund or incident recovery: retry sends it again, mark-settled
 *       records a payout made by hand (checked on chain: token, recipient, amount), fail ends it. A
 *       signal to its FundReturnWorkflow, audited like every operator action.
 */
export function registerFundReturnCommands(register: Register): void {
  register('fund-returns resolve', (argv, ctx) => resolveFromCli(ctx, 'fund_return', argv, USAGE_RESOLVE));
}
