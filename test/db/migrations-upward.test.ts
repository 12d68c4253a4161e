import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDatabase } from '../../src/db/client';
import { applyMigrations, listMigrations } from '../../src/db/migrate';
import { getHarness } from '../support/harness';
import { readCatalog, writeBatch, type Row } from '../support/migration-rows';
import { withScratchDatabase } from '../support/scratch-database';

/**
 * Migrations are applied upward over data, as in production: one database, and before each migration
 * a batch of generated rows in every table that exists at that point (test/support/migration-rows.ts),
 * so each migration runs over rows written under every earlier schema. Each must apply, keep every
 * row (per-table counts never drop below what was written), and at the end the current Prisma client
 * must read every row of every table. prisma/migrations is read as it is: a new migration is covered
 * at once.
 */

const SCHEMA_DIR = path.resolve(__dirname, '../../prisma/schema');

/** model -> table (its @@map), from prisma/schema. */
function modelTables(): Map<string, string> {
  const source = readdirSync(SCHEMA_DIR)
    .filter((f) => f.endsWith('.prisma'))
    .map((f) => readFileSync(path.join(SCHEMA_DIR, f), 'utf8'))
    .join('\n');
  return new Map(
    [...source.matchAll(/^model\s+(\w+)\s*\{([\s\S]*?)^\}/gm)].map((m) => [m[1]!, /@@map\("([^"]+)"\)/.exec(m[2]!)?.[1] ?? m[1]!]),
  );
}

async function counts(client: pg.Client, tables: Iterable<string>): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const t of tables) out.set(t, Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM "${t}"`)).rows[0]!.n));
  return out;
}

test(
  'every migration applies over rows written at every earlier migration, keeps them, and the current client reads them all',
  { timeout: 300_000 },
  async () => {
    const h = await getHarness();
    const migrations = listMigrations();
    assert.ok(migrations.length > 0, 'found the migrations');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pp-upward-migrations-'));
    try {
      await withScratchDatabase(h.databaseUrl, 'upward', async (url) => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        const written = new Map<string, Row[]>();
        const counter = { next: 0 };
        const writeAll = async (batch: number) => {
          const tables = await readCatalog(client);
          const { rows } = await writeBatch(client, tables, batch, counter);
          for (const [table, r] of rows) written.set(table, [...(written.get(table) ?? []), ...r]);
        };
        try {
          for (const [i, m] of migrations.entries()) {
            if (i > 0) await writeAll(i);
            // The runner reads a folder: it holds the migrations up to this one.
            cpSync(path.dirname(m.file), path.join(dir, m.name), { recursive: true });
            const result = await applyMigrations(url, { migrationsDir: dir });
            assert.deepEqual(result.applied, [m.name]);
            const now = await readCatalog(client);
            const gone = [...written.keys()].filter((t) => !now.has(t));
            assert.deepEqual(gone, [], `${m.name} dropped tables that held rows`);
            for (const [table, n] of await counts(client, written.keys())) {
              assert.ok(
                n >= written.get(table)!.length,
                `${m.name} lost rows of ${table}: ${n} left of ${written.get(table)!.length} written`,
              );
            }
          }
          // Rows under today's schema too, then everything through the client the service runs.
          await writeAll(migrations.length);
          const tables = await readCatalog(client);
          const models = modelTables();
          const unmodelled = [...tables.keys()].filter((t) => ![...models.values()].includes(t));
          assert.deepEqual(unmodelled, [], 'tables without a Prisma model');
          const inTables = await counts(client, tables.keys());
          const db = createDatabase({ url, poolMax: 2, acquireTimeoutMs: 10_000 });
          try {
            for (const [model, table] of models) {
              const delegate = (db.prisma as unknown as Record<string, { findMany(): Promise<unknown[]> }>)[
                model[0]!.toLowerCase() + model.slice(1)
              ]!;
              const rows = await delegate.findMany();
              assert.equal(rows.length, inTables.get(table), `${model} reads every row of ${table}`);
              assert.ok(rows.length >= (written.get(table)?.length ?? 0) && rows.length > 0, `${table} holds the rows written to it`);
            }
          } finally {
            await db.close();
          }
        } finally {
          await client.end();
        }
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
