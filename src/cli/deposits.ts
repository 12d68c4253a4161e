import { resolveFromCli } from './holds';
import { parseArgs } from 'node:util';
import { withEngine } from './shared';

import type { Register } from './shared';

const USAGE_RESOLVE =
  'usage: deposits resolve <depositId> --action retry|mark-settled|fail [--tx <hash>] [--reason <text>] [--actor <who>]';

/**
 *   deposits resolve <depositId> --action retry|mark-settled|fail [--tx <hash>] [--reason <text>] [--actor <who>]
 *       releases a requires_intervention deposit: a signal to its DepositWorkflow, which records who and why.
 *   deposits reconcile [--since <ISO date-time>]
 *       runs one reconciliation pass (a workflow on the service's worker) over deposits settled since then
 *       (default: the last 7 days) and prints {checked, valid, pending, reversed}.
 */
export function registerDepositCommands(register: Register): void {
  register('deposits resolve', (argv, ctx) => resolveFromCli(ctx, 'deposit', argv, USAGE_RESOLVE));

  register('deposits reconcile', async (argv, ctx) => {
    const { values } = parseArgs({ args: argv, options: { since: { type: 'string' } }, strict: true });
    if (values.since !== undefined && Number.isNaN(Date.parse(values.since))) throw new Error('--since takes an ISO 8601 date-time');
    const config = ctx.config();
    return withEngine(config, (engine) =>
      engine.reconcileDeposits(values.since ? { settledSince: new Date(values.since).toISOString() } : {}),
    );
  });
}
