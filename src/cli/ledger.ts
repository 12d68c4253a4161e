import { parseArgs } from 'node:util';
import { checkLedger } from '../domain/ledger/check';
import { reconcileLedger } from '../domain/ledger/reconcile';
import { openDatabase } from '../runtime/database';
import { CommandFailed, serviceChains } from './shared';

export { checkLedger } from '../domain/ledger/check';

import type { Register } from './shared';

/**
 *   ledger check       verifies the journal (see checkLedger) and prints {ok, postings, entries, transactions,
 *                      problems}; exits 1 when a problem is found.
 *   ledger reconcile   compares the books of every address the service controls with its on-chain token
 *                      balances (see reconcileLedger) and prints {ok, heads, checked, inFlight, differences};
 *                      exits 1 on any difference. Read-only: alerts are the scheduled workflow's.
 * The register function is passed in (rather than imported from ./index) because a module imported by
 * index.ts runs before index.ts has built its command table.
 */
export function registerLedgerCommands(register: Register): void {
  register('ledger check', async (argv, ctx) => {
    parseArgs({ args: argv, options: {}, strict: true });
    const opened = await openDatabase(ctx.config());
    let result;
    try {
      result = await checkLedger(opened.db.prisma);
    } finally {
      await opened.close();
    }
    if (result.ok) return result;
    throw new CommandFailed(`ledger check found ${result.problems.length} problem(s)`, result);
  });

  register('ledger reconcile', async (argv, ctx) => {
    const { values } = parseArgs({ args: argv, options: { 'page-size': { type: 'string' } }, strict: true });
    const pageSize = values['page-size'] === undefined ? undefined : Number(values['page-size']);
    if (pageSize !== undefined && (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000))
      throw new Error('--page-size takes 1-1000');
    const config = ctx.config();
    const { chains, addressBook: custody } = serviceChains(config, ctx.env);
    const opened = await openDatabase(config);
    let result;
    try {
      result = await reconcileLedger({ prisma: opened.db.prisma, chains, custody }, { pageSize });
    } finally {
      await opened.close();
    }
    if (result.ok) return result;
    throw new CommandFailed(`ledger reconcile found ${result.differences.length} difference(s) between the books and the chain`, result);
  });
}
