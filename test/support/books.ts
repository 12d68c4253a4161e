import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { checkLedger } from '../../src/domain/ledger/check';
import { reconcileLedger, type BooksDifference, type ReconcileResult } from '../../src/domain/ledger/reconcile';
import { mine, pokeScanner } from './chain';
import { getHarness } from './harness';
import { poll } from './until';

/**
 * The books against the chain for chain test files: `ledger reconcile` over every address the service
 * controls, on the shared harness. Call `assertBooksMatchChain({ baseline })` at the end of a file,
 * with a baseline taken in its before(): the database and chain are shared by the whole run, so a
 * difference an earlier file left (on purpose: a reorg test, ledger fixtures without chain money) is
 * not this file's, as long as it is unchanged.
 */
export function reconcileBooks(): Promise<ReconcileResult> {
  return getHarness().then((h) => reconcileLedger({ prisma: h.db.prisma, chains: h.chain.chains, custody: h.chain.custody }));
}

/** difference key -> differenceAtomic. */
export type BooksBaseline = ReadonlyMap<string, string>;

export const differenceKey = (d: Pick<BooksDifference, 'chainId' | 'token' | 'address' | 'book'>): string =>
  `${d.chainId}:${d.token.toLowerCase()}:${(d.address ?? `book:${d.book}`).toLowerCase()}`;

/** The differences the books have now; a later assertBooksMatchChain({ baseline }) tolerates them unchanged. */
export async function booksBaseline(): Promise<BooksBaseline> {
  const result = await reconcileBooks();
  return new Map(result.differences.map((d) => [differenceKey(d), d.differenceAtomic]));
}

/** The differences of `result` that are not in the baseline with the same amount. */
export function newDifferences(result: ReconcileResult, baseline: BooksBaseline = new Map()): BooksDifference[] {
  return result.differences.filter((d) => baseline.get(differenceKey(d)) !== d.differenceAtomic);
}

/**
 * Asserts that every service address's books equal its on-chain balances, money in flight aside (see
 * src/domain/ledger/reconcile.ts). The service may still be catching up (a transfer the scanner has not
 * read, a settlement waiting for depth), so it looks again, poking the scanner and mining a block each
 * round, until nothing new differs; the deadline only turns a hang into a failure listing the
 * differences. Answers the last result.
 */
export async function assertBooksMatchChain(opts: { baseline?: BooksBaseline; timeoutMs?: number } = {}): Promise<ReconcileResult> {
  return poll(
    async (saw) => {
      const result = await reconcileBooks();
      const differences = newDifferences(result, opts.baseline);
      saw({ differences, inFlight: result.inFlight });
      return differences.length === 0 ? result : undefined;
    },
    'the books to match the chain',
    {
      timeoutMs: opts.timeoutMs ?? 60_000,
      async between() {
        await pokeScanner();
        await mine(1);
        await new Promise((r) => setTimeout(r, 200));
      },
    },
  ).catch((err: unknown) => assert.fail(`the books differ from the chain: ${err instanceof Error ? err.message : String(err)}`));
}

/**
 * For each describe of a chain test file: `ledger check` and `ledger reconcile` end it. The baseline
 * is taken before its tests; after them, nothing new may differ and the ledger must check clean.
 */
export function endsWithBooksChecked(): void {
  let baseline: BooksBaseline | undefined;
  before(async () => {
    baseline = await booksBaseline();
  });
  after(async () => {
    await assertBooksMatchChain({ baseline });
    const h = await getHarness();
    const checked = await checkLedger(h.db.prisma);
    assert.equal(checked.ok, true, JSON.stringify(checked.problems));
  });
}
