import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { authenticateApp } from '../../src/domain/apps/apps';
import { listDepositAddresses } from '../../src/domain/deposits/deposit-addresses';
import { ZListDepositAddressesQuery } from '../../src/domain/deposits/deposit.schemas';
import { newId } from '../../src/domain/values/ids';
import { createCursorCodec } from '../../src/domain/requests/pagination';
import { getHarness } from '../support/harness';
import { newMerchant } from '../support/fixtures';

/**
 * Keyset paging (src/domain/requests/pagination.ts afterPosition, shared by every list): following nextCursor
 * from the first page yields every row once, in (createdAt desc, id desc) order, whatever the page
 * size and however many rows share a createdAt (the cursor's row and the rows after it at the same
 * instant are told apart by id). Run on one list, the deposit addresses of a fresh account.
 */
test('following nextCursor yields every row once, in order, with any page size and created_at ties', async () => {
  const h = await getHarness();
  const prisma = h.db.prisma;
  const merchant = await newMerchant();
  const app = (await authenticateApp(prisma, merchant.cred.appId, merchant.cred.appSecret))!;
  const cursors = createCursorCodec('paging-test-secret-of-32-characters-at-least');
  const base = Date.parse('2026-11-22T12:00:00.000Z');
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 0, maxLength: 12 }),
      fc.integer({ min: 1, max: 5 }),
      async (instants, limit) => {
        await prisma.depositAddress.deleteMany({ where: { accountId: merchant.accountId } });
        await prisma.depositAddress.createMany({
          data: instants.map((ms) => ({
            id: newId('depositAddress'),
            appId: app.id,
            accountId: merchant.accountId,
            chainId: 31337,
            networkCode: 'anvil',
            assetSymbol: 'USDC',
            tokenAddress: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
            decimals: 6,
            status: 'active',
            platformFeeBps: 0,
            partnerFeeBps: 0,
            createdAt: new Date(base + ms),
          })),
        });
        const expected = await prisma.depositAddress.findMany({
          where: { accountId: merchant.accountId },
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          select: { id: true },
        });
        const seen: string[] = [];
        let cursor: string | undefined;
        for (let pages = 0; ; pages += 1) {
          assert.ok(pages <= instants.length, 'more pages than rows');
          const page = await listDepositAddresses(
            prisma,
            app,
            merchant.accountId,
            ZListDepositAddressesQuery.parse({ limit, cursor }),
            cursors,
          );
          seen.push(...page.depositAddresses.map((a) => a.id));
          if (!page.nextCursor) break;
          cursor = page.nextCursor;
        }
        assert.deepEqual(
          seen,
          expected.map((r) => r.id),
        );
      },
    ),
    { numRuns: 30 },
  );
});
