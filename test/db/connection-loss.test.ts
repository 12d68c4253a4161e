import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createDatabase, type Database } from '../../src/db/client';
import { getHarness } from '../support/harness';
import { until } from '../support/until';

/**
 * A database restart or failover ends every connection with a FATAL error, also those a transaction
 * holds between two of its statements. pg emits that as an 'error' event on the client, and an
 * 'error' event nobody listens to ends the Node process: a worker or API must lose the transaction, not
 * its life. (Seen in the production rehearsal: a worker died when PostgreSQL restarted.)
 */
/**
 * A pool of its own, an admin connection to end its backends, and every error that escapes to the
 * process while `fn` runs (the process itself would have died of each).
 */
async function withPool(fn: (o: { db: Database; admin: pg.Client; uncaught: unknown[] }) => Promise<void>): Promise<void> {
  const h = await getHarness();
  const db = createDatabase({ url: h.databaseUrl, poolMax: 2, acquireTimeoutMs: 5000 });
  const admin = new pg.Client({ connectionString: h.databaseUrl });
  await admin.connect();
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);
  process.prependListener('uncaughtException', onUncaught);
  try {
    await fn({ db, admin, uncaught });
  } finally {
    process.removeListener('uncaughtException', onUncaught);
    await admin.end();
    await db.close();
  }
}

describe('A connection lost in the middle of a transaction', () => {
  test('fails the transaction and leaves the process and the pool working', async () => {
    await withPool(async ({ db, admin, uncaught }) => {
      let pid: number | undefined;
      let terminated!: () => void;
      const killed = new Promise<void>((resolve) => (terminated = resolve));
      const tx = db.prisma.$transaction(
        async (t) => {
          pid = (await t.$queryRaw<Array<{ pid: number }>>`SELECT pg_backend_pid() AS pid`)[0]!.pid;
          // Idle in transaction, between statements, while the server ends the connection.
          await killed;
          await t.$queryRaw`SELECT 1`;
        },
        { timeout: 30_000 },
      );
      const settled = tx.then(
        () => 'committed',
        (err: unknown) => `failed: ${String(err)}`,
      );
      await until(async (saw) => (saw(pid ?? 'no pid yet'), pid !== undefined), 'the transaction holds its connection');
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      // The FATAL message reaches the client as an 'error' event before any further statement.
      await until(async (saw) => {
        const { rows } = await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1', [pid]);
        saw(rows[0]);
        return rows[0].n === 0;
      }, 'the backend gone');
      await new Promise((resolve) => setImmediate(resolve));
      terminated();
      assert.match(await settled, /^failed: /, 'the transaction fails');
      assert.deepEqual(uncaught.map(String), [], 'no error escaped to the process');
      const [row] = await db.prisma.$queryRaw<Array<{ one: number }>>`SELECT 1 AS one`;
      assert.equal(row!.one, 1, 'the pool serves the next query on a fresh connection');
    });
  });

  test('a connection checked out of the pool and idle: its loss reaches no one and crashes nothing', async () => {
    await withPool(async ({ db, admin, uncaught }) => {
      // As a library holding a session (a lock, a LISTEN, a cursor) does between its statements.
      const client = await db.pool.connect();
      const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      await until(
        async (saw) => (saw(uncaught.length), !(client as unknown as { _queryable: boolean })._queryable),
        'the client to learn its connection is gone',
      );
      client.release(true);
      assert.deepEqual(uncaught.map(String), [], 'no error escaped to the process');
      const { rows } = await db.pool.query<{ one: number }>('SELECT 1 AS one');
      assert.equal(rows[0]!.one, 1, 'the pool serves the next query on a fresh connection');
    });
  });
});
