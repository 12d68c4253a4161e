import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { getAddress } from 'viem';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { applyMigrations } from '../../src/db/migrate';
import type { LedgerCheckResult } from '../../src/domain/ledger/check';
import type { ReconcileResult } from '../../src/domain/ledger/reconcile';
import { createChainServices } from '../../src/runtime/chain-services';
import { getHarness } from '../support/harness';
import { runCli } from '../support/cli';

/** A command that must exit 1: its one JSON line (parsed), and its stderr. */
async function failing(run: () => Promise<unknown>): Promise<{ report: any; stderr: string }> {
  const err = await run().then(
    () => assert.fail('the command exited 0'),
    (e: { code?: number; stdout?: string; stderr?: string }) => e,
  );
  assert.equal(err.code, 1, err.stderr);
  const lines = (err.stdout ?? '').trim().split('\n');
  assert.equal(lines.length, 1, `one JSON line on stdout, got: ${err.stdout}; stderr: ${err.stderr}`);
  return { report: JSON.parse(lines[0]!), stderr: err.stderr ?? '' };
}

/**
 * The failure paths of the commands that print amounts: each prints its whole report as one JSON
 * object (amounts as decimal strings) and exits 1, on a database of its own with a real difference
 * between the books and the chain, and a real problem in the journal.
 */
describe('CLI failure output carries amounts as decimal strings', () => {
  const name = `pp_cli_failure_${process.pid}`;
  let admin: pg.Client;
  let url: URL;
  let env: Record<string, string>;
  let db: pg.Client;
  let vaultAddress: string;

  before(async () => {
    const h = await getHarness();
    const adminUrl = new URL(h.databaseUrl);
    adminUrl.pathname = '/postgres';
    admin = new pg.Client({ connectionString: adminUrl.toString() });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${name}"`);
    url = new URL(h.databaseUrl);
    url.pathname = `/${name}`;
    await applyMigrations(url.toString());
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pp-cli-failure-'));
    const custody = createChainServices(h.environments, dataDir).custody; // writes the seed the CLI reads
    const environmentsFile = path.join(dataDir, 'environments.json');
    writeFileSync(environmentsFile, JSON.stringify(h.environments));
    env = { DATABASE_URL: url.toString(), ENVIRONMENTS_FILE: environmentsFile, DATA_DIR: dataDir };
    db = new pg.Client({ connectionString: url.toString() });
    await db.connect();
    vaultAddress = custody.deriveAddress({ purpose: 'vault', index: 7 }).toLowerCase();
  });

  after(async () => {
    await db?.end();
    await admin?.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin?.end();
  });

  test('`ledger reconcile` with a difference and a receipt in flight prints its report and exits 1', async () => {
    const h = await getHarness();
    // A vault whose receipt of 2 USDC is seen (in flight) but which holds nothing on chain: the books
    // and the receipt say 2 USDC arrive, the chain says none did.
    await db.query(`INSERT INTO custody_addresses (address, purpose, custody_index) VALUES ($1, 'vault', 7)`, [vaultAddress]);
    await db.query(
      `INSERT INTO vaults (id, app_id, account_id, chain_id, network_code, address, status) VALUES ('vault_cli_failure', 'app_cli_failure', 'acct_cli_failure', $1, 'sandbox', $2, 'active')`,
      [h.chainId, vaultAddress],
    );
    const txHash = `0x${'ab'.repeat(32)}`;
    await db.query(
      `INSERT INTO vault_receipts (id, vault_id, app_id, chain_id, token_address, asset_symbol, decimals, transfer_key, tx_hash, log_index, ordinal, block_number, from_address, amount_atomic, status)
       VALUES ('vrcpt_cli_failure', 'vault_cli_failure', 'app_cli_failure', $1, $2, 'USDC', 6, 'key_cli_failure', $3, 0, 0, '1', $4, 2000000, 'seen')`,
      [h.chainId, SANDBOX_TOKEN_ADDRESS.toLowerCase(), txHash, `0x${'cd'.repeat(20)}`],
    );

    const { report, stderr } = await failing(() => runCli(['ledger', 'reconcile'], env));
    const r = report as ReconcileResult;
    assert.equal(r.ok, false);
    assert.deepEqual(r.inFlight, [
      {
        address: getAddress(vaultAddress),
        purpose: 'vault',
        chainId: h.chainId,
        token: SANDBOX_TOKEN_ADDRESS,
        amountAtomic: '2000000',
        kind: 'vault_receipt',
        sourceType: 'vault',
        sourceId: 'vault_cli_failure',
        txHash,
      },
    ]);
    assert.deepEqual(
      r.differences.filter((d) => d.address === getAddress(vaultAddress)),
      [
        {
          address: getAddress(vaultAddress),
          purpose: 'vault',
          book: 'custody:vault:vault_cli_failure',
          chainId: h.chainId,
          token: SANDBOX_TOKEN_ADDRESS,
          ledgerAtomic: '0',
          chainAtomic: '0',
          inFlightAtomic: '2000000',
          differenceAtomic: '-2000000',
        },
      ],
    );
    assert.match(stderr, /1 difference/);
  });

  test("`ledger check` with an entry on a partner account's book attributed to no account prints its report and exits 1", async () => {
    const h = await getHarness();
    // A balanced posting (the database refuses any other) whose account entry names no account.
    await db.query('BEGIN');
    await db.query(
      `INSERT INTO ledger_postings (id, app_id, source_type, source_id, leg, description, fingerprint) VALUES ('lpost_cli_failure', 'app_cli_failure', 'payment', 'pay_cli_failure', 'collection', 'misattributed', 'x')`,
    );
    for (const [line, book, amount] of [
      [1, 'upa:acct_cli_failure:settled', '3000000'],
      [2, `external:${h.chainId}`, '-3000000'],
    ] as const) {
      await db.query(
        `INSERT INTO ledger_entries (id, posting_id, line, book, chain_id, token_address, asset_symbol, decimals, amount_atomic) VALUES ($1, 'lpost_cli_failure', $2, $3, $4, $5, 'USDC', 6, $6)`,
        [`lent_cli_failure_${line}`, line, book, h.chainId, SANDBOX_TOKEN_ADDRESS.toLowerCase(), amount],
      );
    }
    await db.query('COMMIT');
    const { report, stderr } = await failing(() => runCli(['ledger', 'check'], env));
    const r = report as LedgerCheckResult;
    assert.equal(r.ok, false);
    assert.deepEqual(
      r.problems.filter((p) => p.code === 'upa_book_misattributed').map((p) => [p.entryId, p.book, p.accountId]),
      [['lent_cli_failure_1', 'upa:acct_cli_failure:settled', null]],
    );
    assert.match(stderr, /problem/);
  });
});
