import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { applyMigrations, listMigrations } from '../../src/db/migrate';
import { getHarness } from '../support/harness';
import { withScratchDatabase } from '../support/scratch-database';

const RULE = '20261126020000_vault_funding_one_per_payment';

/**
 * The one-vault-payment-per-Payment index is built over rows written before the rule, which may
 * break it: a Payment paid twice. Of its live operations the one that moved money is kept; one that
 * never sent is failed (its reserve released); one that also sent keeps its status, flagged.
 */
test('the one-per-Payment rule applies over duplicates: the unsent is failed, the sent is kept and flagged, the rule then holds', async () => {
  const h = await getHarness();
  const all = listMigrations();
  const at = all.findIndex((m) => m.name === RULE);
  assert.ok(at > 0, `found ${RULE}`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pp-vault-rule-'));
  try {
    await withScratchDatabase(h.databaseUrl, 'vault_rule', async (url) => {
      for (const m of all.slice(0, at)) cpSync(path.dirname(m.file), path.join(dir, m.name), { recursive: true });
      await applyMigrations(url, { migrationsDir: dir });
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        // Foreign keys are not the point here: the rows stand alone.
        await client.query(`SET session_replication_role = replica`);
        const op = (id: string, paymentId: string, status: string, minute: number) =>
          client.query(
            `INSERT INTO vault_funding_operations (id, vault_id, account_id, payment_id, status, status_version, commercial_fee_mode, chain_id, token_address, amount_atomic, to_address, period_start, authorized_at)
             VALUES ($1, 'vault_1', 'acct_1', $2, $3, 1, 'included', 31337, '0xtoken', 100, '0xescrow', now(), now() + make_interval(mins => $4))`,
            [id, paymentId, status, minute],
          );
        // Payment A: the first authorized never sent; the second broadcast; a third sent a leg while still authorized.
        await op('vfo_a1', 'pay_a', 'authorized', 0);
        await op('vfo_a2', 'pay_a', 'broadcast', 1);
        await op('vfo_a3', 'pay_a', 'authorized', 2);
        await client.query(
          `INSERT INTO settlement_legs (id, source_type, source_id, leg, chain_id, from_address, to_address, token_address, amount_atomic, nonce, tx_hash, serialized, status)
           VALUES ('leg_a3', 'vault_funding', 'vfo_a3', 'net', 31337, '0xvault', '0xescrow', '0xtoken', 100, 0, '0xhash_a3', '0x', 'confirmed')`,
        );
        // Payment B: two that never sent; the first authorized is kept. Payment C: one, untouched.
        await op('vfo_b1', 'pay_b', 'authorized', 0);
        await op('vfo_b2', 'pay_b', 'authorized', 1);
        await op('vfo_c1', 'pay_c', 'confirmed', 0);
        await client.query(`SET session_replication_role = origin`);

        cpSync(path.dirname(all[at]!.file), path.join(dir, RULE), { recursive: true });
        assert.deepEqual((await applyMigrations(url, { migrationsDir: dir })).applied, [RULE]);

        const rows = await client.query<{ id: string; status: string; failure_reason: string | null; duplicate_before_rule: boolean }>(
          `SELECT id, status, failure_reason, duplicate_before_rule FROM vault_funding_operations ORDER BY id`,
        );
        assert.deepEqual(
          rows.rows.map((r) => [r.id, r.status, r.failure_reason, r.duplicate_before_rule]),
          [
            ['vfo_a1', 'failed', 'duplicate_for_payment', false],
            ['vfo_a2', 'broadcast', null, false],
            ['vfo_a3', 'authorized', null, true],
            ['vfo_b1', 'authorized', null, false],
            ['vfo_b2', 'failed', 'duplicate_for_payment', false],
            ['vfo_c1', 'confirmed', null, false],
          ],
        );
        await client.query(`SET session_replication_role = replica`);
        await assert.rejects(
          op('vfo_b3', 'pay_b', 'authorized', 3),
          /vault_funding_operations_payment_live_key/,
          'a second live vault payment for a Payment is refused',
        );
      } finally {
        await client.end();
      }
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
