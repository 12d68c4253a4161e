import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { getHarness } from '../support/harness';
import { API_DENIED_TABLES, API_READ_ONLY_TABLES, loginFacts, loginProblems } from '../../src/db/roles';
import { userOf } from '../../src/config';
import { withConnection as as } from '../../src/db/one-connection';

/** The statement fails with PostgreSQL's insufficient_privilege (42501). */
async function refused(client: pg.Client, sql: string): Promise<void> {
  await assert.rejects(client.query(sql), (err: { code?: string; message: string }) => {
    assert.equal(err.code, '42501', `${sql}: ${err.message}`);
    return true;
  });
}

describe('database roles: the API and the worker log in as roles of their own', () => {
  test('the API login is no superuser, can not write or read the worker-only tables, nor change the schema', async (t) => {
    const h = await getHarness();
    const url = h.databaseUrlOf('api');
    if (userOf(url) === userOf(h.databaseUrl)) return t.skip('DATABASE_URL alone: one login for every role');
    await as(url, async (client) => {
      const facts = await loginFacts((sql) => client.query(sql));
      assert.equal(facts.user, userOf(url));
      assert.equal(facts.superuser, false);
      assert.equal(facts.canChangeSchema, false);
      assert.equal(facts.writesWorkerOnlyTable, false);
      assert.deepEqual(loginProblems('api', facts), []);
      for (const table of API_DENIED_TABLES) {
        await refused(client, `INSERT INTO ${table} (key, holder, expires_at) VALUES ('x', 'api', now())`);
        await refused(client, `SELECT 1 FROM ${table}`);
      }
      for (const table of API_READ_ONLY_TABLES) {
        await client.query(`SELECT 1 FROM ${table} LIMIT 1`);
        await refused(client, `DELETE FROM ${table}`);
      }
      await refused(client, 'DELETE FROM _prisma_migrations');
      await refused(client, 'CREATE TABLE api_was_here (id int)');
      await refused(client, 'ALTER TABLE payments ADD COLUMN api_was_here int');
      await refused(client, 'DROP TABLE apps');
      // What it does need: the tables behind its requests.
      await client.query('SELECT count(*) FROM payments');
      await client.query('BEGIN');
      await client.query(`UPDATE apps SET name = name WHERE false`);
      await client.query('ROLLBACK');
    });
  });

  test('the API and the worker under test run on their own logins, as in production, not the owner tests seed with', async (t) => {
    const h = await getHarness();
    if (userOf(h.databaseUrlOf('api')) === userOf(h.databaseUrl)) return t.skip('DATABASE_URL alone: one login for every role');
    const userOfPool = async (db: typeof h.db) => (await db.pool.query<{ u: string }>('SELECT current_user AS u')).rows[0]!.u;
    assert.equal(await userOfPool(h.apiDb), userOf(h.databaseUrlOf('api')));
    assert.equal(await userOfPool(h.workerDb), userOf(h.databaseUrlOf('worker')));
    assert.equal(await userOfPool(h.db), userOf(h.databaseUrl));
  });

  test('the worker login writes every table of the service but changes no schema and is no superuser', async (t) => {
    const h = await getHarness();
    const url = h.databaseUrlOf('worker');
    if (userOf(url) === userOf(h.databaseUrl)) return t.skip('DATABASE_URL alone: one login for every role');
    assert.notEqual(userOf(url), userOf(h.databaseUrlOf('api')));
    await as(url, async (client) => {
      const facts = await loginFacts((sql) => client.query(sql));
      assert.equal(facts.superuser, false);
      assert.equal(facts.canChangeSchema, false);
      assert.equal(facts.writesWorkerOnlyTable, true);
      assert.deepEqual(loginProblems('worker', facts), []);
      await refused(client, 'CREATE TABLE worker_was_here (id int)');
      await refused(client, 'ALTER TABLE sender_locks ADD COLUMN worker_was_here int');
      await refused(client, 'TRUNCATE payments');
      await refused(client, 'DELETE FROM _prisma_migrations');
      await client.query('BEGIN');
      await client.query(`DELETE FROM sender_locks WHERE false`);
      await client.query(`UPDATE settlement_legs SET status = status WHERE false`);
      await client.query('ROLLBACK');
    });
  });

  test('a table a later migration adds is the worker’s and the API’s at once, unless the API’s deny list names it', async (t) => {
    const h = await getHarness();
    if (userOf(h.databaseUrlOf('api')) === userOf(h.databaseUrl)) return t.skip('DATABASE_URL alone: one login for every role');
    await as(h.databaseUrl, (owner) => owner.query('CREATE TABLE IF NOT EXISTS roles_test_later (id int)'));
    try {
      for (const role of ['api', 'worker'] as const) {
        await as(h.databaseUrlOf(role), async (client) => {
          await client.query('INSERT INTO roles_test_later VALUES (1)');
          await client.query('DELETE FROM roles_test_later');
        });
      }
    } finally {
      await as(h.databaseUrl, (owner) => owner.query('DROP TABLE roles_test_later'));
    }
  });

  test('in production a login that is a superuser, the owner, or shared with the worker is refused, naming its setting', () => {
    const base = { user: 'x', superuser: false, canChangeSchema: false, writesWorkerOnlyTable: false };
    assert.match(loginProblems('api', { ...base, superuser: true }).join(), /^API_DATABASE_URL: .*superuser/);
    assert.match(loginProblems('api', { ...base, writesWorkerOnlyTable: true }).join(), /^API_DATABASE_URL: .*worker-only/);
    assert.match(
      loginProblems('worker', { ...base, canChangeSchema: true, writesWorkerOnlyTable: true }).join(),
      /^WORKER_DATABASE_URL: .*row access/,
    );
    assert.match(loginProblems('worker', base).join(), /^WORKER_DATABASE_URL: .*API's login/);
  });
});
