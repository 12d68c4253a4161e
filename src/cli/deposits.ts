import { parseArgs } from 'node:util';
import { resolveHold } from '../domain/operators/operator-actions';
import { openDatabase } from '../runtime/database';
import { chainsFor, parseResolutionArgs, withEngine } from './shared';

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
  register('deposits resolve', async (argv, ctx) => {
    const { id: depositId, ...request } = parseResolutionArgs(argv, USAGE_RESOLVE);
    const config = ctx.config();
    const opened = await openDatabase(config);
    try {
      return await withEngine(config, (engine) =>
        resolveHold({ prisma: opened.db.prisma, chains: chainsFor(config) }, engine, { type: 'deposit', id: depositId }, request, 'cli'),
      );
    } finally {
      await opened.close();
    }
  });

  register('deposits reconcile', async (argv, ctx) => {
    const { values } = parseArgs({ args: argv, options: { since: { type: 'string' } }, strict: true });
    if (values.since !== undefined && Number.isNaN(Date.parse(values.since))) throw new Error('--since takes an ISO 8601 date-time');
    const config = ctx.config();
    return withEngine(config, (engine) =>
      engine.reconcileDeposits(values.since ? { settledSince: new Date(values.since).toISOString() } : {}),
    );
  });
}
