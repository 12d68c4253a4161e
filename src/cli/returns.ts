import { resolveHold } from '../domain/operators/operator-actions';
import { openDatabase } from '../runtime/database';
import { chainsFor, parseResolutionArgs, withEngine } from './shared';

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
  register('fund-returns resolve', async (argv, ctx) => {
    const { id, ...request } = parseResolutionArgs(argv, USAGE_RESOLVE);
    const config = ctx.config();
    const opened = await openDatabase(config);
    try {
      return await withEngine(config, (engine) =>
        resolveHold({ prisma: opened.db.prisma, chains: chainsFor(config) }, engine, { type: 'fund_return', id }, request, 'cli'),
      );
    } finally {
      await opened.close();
    }
  });
}
