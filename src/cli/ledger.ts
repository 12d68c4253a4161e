import { parseArgs } from 'node:util';
import { loadConfig } from '../config';
import { checkLedger } from '../domain/ledger/check';
import { openDatabase } from '../runtime/database';

export { checkLedger } from '../domain/ledger/check';

type Register = (name: string, command: (argv: string[]) => Promise<unknown>) => void;

/**
 *   ledger check   verifies the journal (see checkLedger) and prints {ok, postings, entries, transactions,
 *                  problems}; exits 1 when a problem is found.
 * The register function is passed in (rather than imported from ./index) because a module imported by
 * index.ts runs before index.ts has built its command table.
 */
export function registerLedgerCommands(register: Register): void {
  register('ledger check', async (argv) => {
    parseArgs({ args: argv, options: {}, strict: true });
    const opened = await openDatabase(loadConfig());
    let result;
    try {
      result = await checkLedger(opened.db.prisma);
    } finally {
      await opened.close();
    }
    if (result.ok) return result;
    // Still exactly one JSON object on stdout; the thrown error makes the exit code 1.
    process.stdout.write(`${JSON.stringify(result)}\n`);
    throw new Error(`ledger check found ${result.problems.length} problem(s)`);
  });
}
