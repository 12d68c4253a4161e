import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { getAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { applyMigrations } from '../../src/db/migrate';
import type { BooksDifference, ReconcileResult } from '../../src/domain/ledger/reconcile';
import { createChainServices } from '../../src/runtime/chain-services';
import { assertBooksMatchChain, booksBaseline, differenceKey, newDifferences, reconcileBooks, type BooksBaseline } from '../support/books';
import {
  mine,
  newPayer,
  payTo,
  setNativeBalance,
  setTreasuryGas,
  settlementLegsMined,
  tokenBalance,
  withMiningPaused,
} from '../support/chain';
import { getHarness } from '../support/harness';
import { runCli } from '../support/cli';
import { send, USDC, waitForDeposits } from '../deposits/helpers';
import { newApp } from '../support/api-client';
import { createPayment, newMerchant, waitForPayment, newAccountWithWallet, newDepositAddress } from '../support/fixtures';
import { appWithAccount, receivePayment } from './fixtures';

async function wallets() {
  const h = await getHarness();
  const at = (purpose: 'treasury' | 'fee', index: number) => getAddress(h.chain.custody.deriveAddress({ purpose, index }));
  return { treasury: at('treasury', 0), platformFees: at('fee', 0), partnerFees: at('fee', 1) };
}

const at = (r: ReconcileResult, address: string) => ({
  differences: r.differences.filter((d) => d.address?.toLowerCase() === address.toLowerCase()),
  inFlight: r.inFlight.filter((f) => f.address.toLowerCase() === address.toLowerCase()),
});

/** The difference at a fixed wallet (0 when there is none). */
const differenceAt = (r: ReconcileResult, address: string) => BigInt(at(r, address).differences[0]?.differenceAtomic ?? '0');

/** Moves tokens out of a service address again, so the books and the chain agree for later files. */
async function moveOut(path: { purpose: 'treasury' | 'fee'; index: number }, amountAtomic: bigint): Promise<void> {
  const h = await getHarness();
  const signer = h.chain.custody.signer(path);
  const chain = h.chain.chains.get(h.chainId);
  if ((await chain.getNativeBalance(signer.address)) < 10n ** 17n) await setNativeBalance(signer.address, 10n ** 18n);
  const sink = privateKeyToAccount(generatePrivateKey()).address;
  const hash = await chain.sendTokenTransfer({ from: signer, token: SANDBOX_TOKEN_ADDRESS, to: sink, amountAtomic });
  while ((await chain.getTransactionStatus(hash, 1)) !== 'confirmed') await mine(1);
}

describe('Ledger reconcile: the books against the chain', () => {
  let baseline: BooksBaseline;
  before(async () => {
    baseline = await booksBaseline();
  });

  test('a settled Payment (with excess held in escrow) and a settled deposit reconcile: no difference, nothing in flight, fee wallets moved with their books', async () => {
    const w = await wallets();
    const start = await reconcileBooks();
    const feesBefore = { platform: await tokenBalance(w.platformFees), partner: await tokenBalance(w.partnerFees) };

    const m = await newMerchant();
    const p = (await createPayment(m, { amount: '10' })).body.payment;
    const escrow: string = p.funding.depositAddress.address;
    await payTo(await newPayer(12n * USDC), escrow, 12n * USDC); // 2 USDC more than asked: held in escrow
    await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');

    const cred = await newApp();
    const { accountId } = await newAccountWithWallet(cred);
    const deposit = await newDepositAddress(cred, accountId);
    await send(await newPayer(20n * USDC), deposit.address, 20n * USDC);
    await waitForDeposits(accountId, (d) => d.length === 1 && d[0]!.status === 'settled', { mine: true, what: 'settled' });

    const result = await assertBooksMatchChain({ baseline });
    // escrow:P holds the excess (+2 USDC, an asset of the service) and so does the chain; the deposit
    // address's book and balance are both back to 0.
    assert.equal(await tokenBalance(escrow), 2n * USDC);
    assert.equal(await tokenBalance(deposit.address), 0n);
    assert.deepEqual(at(result, escrow), { differences: [], inFlight: [] });
    assert.deepEqual(at(result, deposit.address), { differences: [], inFlight: [] });
    // The fee wallets received 1% + 0.5% of 10 and of 20 USDC on chain, and their books the same:
    // whatever difference they had before is unchanged.
    assert.equal((await tokenBalance(w.platformFees)) - feesBefore.platform, 300_000n);
    assert.equal((await tokenBalance(w.partnerFees)) - feesBefore.partner, 150_000n);
    assert.equal(differenceAt(result, w.platformFees), differenceAt(start, w.platformFees));
    assert.equal(differenceAt(result, w.partnerFees), differenceAt(start, w.partnerFees));
  });

  test('tokens sent straight to the treasury or a fee wallet are money the books do not know: reported as differences', async () => {
    const h = await getHarness();
    const w = await wallets();
    const start = await reconcileBooks();
    const payer = await newPayer(5n * USDC);
    await send(payer, w.treasury, 3n * USDC);
    await send(payer, w.platformFees, 2n * USDC);
    try {
      const result = await reconcileBooks();
      assert.equal(result.ok, false);
      const treasury = at(result, w.treasury).differences;
      assert.equal(treasury.length, 1, JSON.stringify(treasury));
      assert.deepEqual(
        { ...treasury[0]!, chainAtomic: undefined },
        {
          address: w.treasury,
          purpose: 'treasury',
          book: null,
          chainId: h.chainId,
          token: SANDBOX_TOKEN_ADDRESS,
          ledgerAtomic: '0',
          chainAtomic: undefined,
          inFlightAtomic: '0',
          differenceAtomic: (differenceAt(start, w.treasury) + 3n * USDC).toString(),
        },
      );
      assert.equal(BigInt(treasury[0]!.chainAtomic), await tokenBalance(w.treasury));
      const platform = at(result, w.platformFees).differences;
      assert.equal(platform.length, 1);
      assert.equal(platform[0]!.purpose, 'platform_fees');
      assert.equal(platform[0]!.book, 'fees:platform');
      assert.equal(BigInt(platform[0]!.differenceAtomic), differenceAt(start, w.platformFees) + 2n * USDC);
    } finally {
      await moveOut({ purpose: 'treasury', index: 0 }, 3n * USDC);
      await moveOut({ purpose: 'fee', index: 0 }, 2n * USDC);
    }
    const after = await reconcileBooks();
    assert.equal(differenceAt(after, w.treasury), differenceAt(start, w.treasury));
    assert.equal(differenceAt(after, w.platformFees), differenceAt(start, w.platformFees));
  });

  test('a settlement mined but not yet posted is money in flight, not a difference; once posted nothing is in flight', async () => {
    const h = await getHarness();
    const w = await wallets();
    const m = await newMerchant();
    const p = (await createPayment(m, { amount: '5' })).body.payment;
    const escrow: string = p.funding.depositAddress.address;
    const liveLegs = () =>
      h.db.prisma.settlementLeg.findMany({ where: { sourceType: 'payment', sourceId: p.id, status: { in: ['broadcast', 'confirmed'] } } });
    await setTreasuryGas(0n);
    try {
      await payTo(await newPayer(5n * USDC), escrow, 5n * USDC);
      await waitForPayment(m, p.id, 'accepted, settlement failing for want of gas', (x) => x.operationalState === 'retrying');
      // From here on a block is mined only when this test mines one: the legs end up mined, the last
      // at depth 1, under the confirmation depth (2) the Payment waits for before it posts.
      await withMiningPaused(async () => {
        await setTreasuryGas(100n * 10n ** 18n);
        // A block a round: first for the gas top-up, then until the three legs are sent and each is in a block.
        const legs = await settlementLegsMined(liveLegs, 3);
        const posted = () => h.db.prisma.ledgerPosting.count({ where: { sourceType: 'payment', sourceId: p.id, leg: 'settlement' } });
        assert.equal(await posted(), 0, 'the settlement was posted before the legs were deep enough');

        const result = await reconcileBooks();
        assert.deepEqual(newDifferences(result, baseline), []);
        const sum = (xs: Array<{ amountAtomic: string }>) => xs.reduce((s, x) => s + BigInt(x.amountAtomic), 0n);
        const escrowFlight = at(result, escrow).inFlight;
        assert.deepEqual(
          escrowFlight.map((f) => [f.kind, f.sourceId]),
          legs.map(() => ['settlement_leg', p.id]),
        );
        assert.equal(sum(escrowFlight), -5n * USDC);
        assert.deepEqual(
          at(result, w.platformFees).inFlight.map((f) => [f.kind, f.amountAtomic]),
          [['settlement_leg', '50000']],
        );
        assert.deepEqual(
          at(result, w.partnerFees).inFlight.map((f) => [f.kind, f.amountAtomic]),
          [['settlement_leg', '25000']],
        );
        assert.equal(await posted(), 0);
      });
    } finally {
      await setTreasuryGas(100n * 10n ** 18n);
    }
    await mine(1);
    await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
    const settled = await assertBooksMatchChain({ baseline });
    assert.deepEqual(at(settled, escrow), { differences: [], inFlight: [] });
  });

  test('a book whose escrow address the service does not know is a difference: the books claim money no address holds', async () => {
    const { cred, accountId } = await appWithAccount();
    const { paymentId } = await receivePayment({ appId: cred.appId, accountId, amount: 7_000_000n });
    const result = await reconcileBooks();
    const h = await getHarness();
    assert.deepEqual(
      result.differences.filter((d) => d.book === `escrow:${paymentId}`),
      [
        {
          address: null,
          purpose: 'escrow',
          book: `escrow:${paymentId}`,
          chainId: h.chainId,
          token: SANDBOX_TOKEN_ADDRESS,
          ledgerAtomic: '7000000',
          chainAtomic: '0',
          inFlightAtomic: '0',
          differenceAtomic: '-7000000',
        } satisfies BooksDifference,
      ],
    );
    baseline = new Map([...baseline, [differenceKey(result.differences.find((d) => d.book === `escrow:${paymentId}`)!), '-7000000']]);
  });

  test('`ledger reconcile` prints one JSON object and exits 0 while the books match the chain, 1 with the difference once tokens reach the treasury', async () => {
    const h = await getHarness();
    // A database and a custody seed of its own (on the shared chain): nothing another test left behind
    // can make it differ, so exit 0 is this command's answer, not luck.
    const name = `pp_reconcile_cli_${process.pid}`;
    const adminUrl = new URL(h.databaseUrl);
    adminUrl.pathname = '/postgres';
    const admin = new pg.Client({ connectionString: adminUrl.toString() });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${name}"`);
    const url = new URL(h.databaseUrl);
    url.pathname = `/${name}`;
    try {
      await applyMigrations(url.toString());
      const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pp-reconcile-cli-'));
      const custody = createChainServices(h.environments, dataDir).custody; // writes the seed the CLI reads
      const environmentsFile = path.join(dataDir, 'environments.json');
      writeFileSync(environmentsFile, JSON.stringify(h.environments));
      const cli = () =>
        runCli(['ledger', 'reconcile'], { DATABASE_URL: url.toString(), ENVIRONMENTS_FILE: environmentsFile, DATA_DIR: dataDir });

      const clean = await cli();
      const lines = clean.stdout.trim().split('\n');
      assert.equal(lines.length, 1, clean.stdout);
      const ok = JSON.parse(lines[0]!) as ReconcileResult;
      assert.equal(ok.ok, true);
      assert.deepEqual(ok.differences, []);
      // Treasury and two fee wallets, each asset of each network (the sandbox's one, production's two chains of two).
      const assets = h.chain.chains.networks().reduce((n, net) => n + net.assets.length, 0);
      assert.equal(ok.checked, 3 * assets);
      assert.deepEqual(
        ok.heads.map((x) => x.chainId),
        h.chain.chains
          .networks()
          .map((n) => n.chainId)
          .sort((a, b) => a - b),
      );

      const treasury = getAddress(custody.deriveAddress({ purpose: 'treasury', index: 0 }));
      await send(await newPayer(2n * USDC), treasury, 1_500_000n);
      const failed = await cli().then(
        () => assert.fail('ledger reconcile exited 0 with tokens the books do not know'),
        (err: { code?: number; stdout?: string; stderr?: string }) => err,
      );
      assert.equal(failed.code, 1, failed.stderr);
      const out = failed.stdout!.trim().split('\n');
      assert.equal(out.length, 1, failed.stdout);
      const report = JSON.parse(out[0]!) as ReconcileResult;
      assert.equal(report.ok, false);
      assert.deepEqual(report.differences, [
        {
          address: treasury,
          purpose: 'treasury',
          book: null,
          chainId: h.chainId,
          token: SANDBOX_TOKEN_ADDRESS,
          ledgerAtomic: '0',
          chainAtomic: '1500000',
          inFlightAtomic: '0',
          differenceAtomic: '1500000',
        },
      ]);
      assert.match(failed.stderr!, /1 difference/);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    }
  });

  test('assertBooksMatchChain: the books of every service address still match the chain, apart from what was there before', async () => {
    await assertBooksMatchChain({ baseline });
    // And it fails when they don't: a token the books don't know, at a fresh registered address.
    const h = await getHarness();
    const stray = h.chain.custody.deriveAddress({ purpose: 'treasury', index: 900_000 + (process.pid % 1000) });
    await h.db.prisma.custodyAddress.createMany({
      data: [{ address: stray.toLowerCase(), purpose: 'treasury', custodyIndex: 900_000 + (process.pid % 1000) }],
      skipDuplicates: true,
    });
    await send(await newPayer(USDC), stray, 1n);
    await assert.rejects(assertBooksMatchChain({ baseline, timeoutMs: 0 }), (err: Error) => {
      assert.match(err.message, /the books differ from the chain/);
      return true;
    });
    await moveOut({ purpose: 'treasury', index: 900_000 + (process.pid % 1000) }, 1n);
    await assertBooksMatchChain({ baseline });
  });
});
