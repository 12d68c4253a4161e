import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/common';
import { classifiedActivities } from '../../activities/failures';
import { createDatabase, type PrismaClient } from '../../src/db/client';
import { DATA_ERROR } from '../../workflows/contracts/failures';
import { newApp } from '../support/api-client';
import { getHarness } from '../support/harness';

/** Runs fn as an activity named `act` under the one classification, and answers what it threw. */
async function thrownBy(fn: () => Promise<unknown>): Promise<unknown> {
  const activities = classifiedActivities({ act: fn });
  try {
    await activities.act();
  } catch (err) {
    return err;
  }
  assert.fail('the activity did not fail');
}

function assertDataError(err: unknown, sqlState: string, secret?: string): void {
  assert.ok(err instanceof ApplicationFailure, `not an ApplicationFailure: ${String(err)}`);
  assert.equal(err.type, DATA_ERROR);
  assert.equal(err.nonRetryable, true);
  assert.match(err.message, /^act: /);
  assert.ok(err.message.includes(sqlState), err.message);
  if (secret)
    assert.ok(!err.message.includes(secret) && !JSON.stringify(err.details).includes(secret), 'the message must not carry the values');
}

function assertRetryable(err: unknown): void {
  assert.ok(!(err instanceof ApplicationFailure), `classified as ${(err as ApplicationFailure).type}: ${(err as Error).message}`);
}

/** A table of this connection only (a transaction holds one connection), with the constraints to break. */
async function inScratchTable(prisma: PrismaClient, sql: string): Promise<void> {
  await prisma.$transaction(async (tx) => {
    await tx.$executeRawUnsafe('CREATE TEMP TABLE scratch (v int NOT NULL CHECK (v > 0)) ON COMMIT DROP');
    await tx.$executeRawUnsafe(sql);
  });
}

/** Raises a PostgreSQL error of that SQLSTATE, as the server would. */
const raise = (prisma: PrismaClient, sqlState: string) =>
  prisma.$executeRawUnsafe(`DO $$ BEGIN RAISE EXCEPTION 'provoked' USING ERRCODE = '${sqlState}'; END $$`);

describe('activity errors are classified once: data errors stop, transient errors retry', () => {
  test('PostgreSQL data errors raised through Prisma are non-retryable data_error naming the activity and the SQLSTATE, not the values', async () => {
    const h = await getHarness();
    const prisma = h.db.prisma;
    const cred = await newApp();
    const record = { key: 'dup', method: 'POST', path: '/x', requestHash: 'sekrit', state: 'in_progress', lockedUntil: new Date() };
    // 22021 a NUL in text (the reported wedge: "invalid byte sequence for encoding UTF8: 0x00"), through a model write.
    assertDataError(
      await thrownBy(() => prisma.idempotencyRecord.create({ data: { appId: cred.appId, ...record, key: 'sekrit\u0000' } })),
      '22021',
      'sekrit',
    );
    // 22003 numeric value out of range, 22P02 invalid text representation.
    assertDataError(await thrownBy(() => prisma.$queryRawUnsafe(`SELECT $1::numeric(78,0)`, '1' + '0'.repeat(80))), '22003');
    assertDataError(await thrownBy(() => prisma.$queryRawUnsafe(`SELECT $1::int`, 'sekrit')), '22P02', 'sekrit');
    // 23505 unique and 23503 foreign key, through model writes.
    await prisma.idempotencyRecord.create({ data: { appId: cred.appId, ...record } });
    assertDataError(await thrownBy(() => prisma.idempotencyRecord.create({ data: { appId: cred.appId, ...record } })), '23505', 'sekrit');
    const orphan = {
      id: `acct_orphan_${process.pid}`,
      appId: 'app_missing',
      externalUserId: 'sekrit',
      subjectType: 'individual',
      status: 'active',
      metadata: {},
    };
    assertDataError(await thrownBy(() => prisma.account.create({ data: orphan })), '23503', 'sekrit');
    // 23514 check and 23502 not-null, inside an interactive transaction (as the stores write).
    assertDataError(await thrownBy(() => inScratchTable(prisma, 'INSERT INTO scratch VALUES (-1)')), '23514');
    assertDataError(await thrownBy(() => inScratchTable(prisma, 'INSERT INTO scratch VALUES (NULL)')), '23502');
  });

  test('serialization failures, deadlocks, statement timeouts, a refused connection and a pool acquire timeout stay retryable', async () => {
    const h = await getHarness();
    for (const sqlState of ['40001', '40P01', '57014', '57P01', '08006'])
      assertRetryable(await thrownBy(() => raise(h.db.prisma, sqlState)));

    const refused = createDatabase({ url: 'postgresql://nobody@127.0.0.1:1/none', poolMax: 1, acquireTimeoutMs: 1000 });
    try {
      assertRetryable(await thrownBy(() => refused.prisma.payment.count()));
    } finally {
      await refused.close();
    }

    const busy = createDatabase({ url: h.databaseUrl, poolMax: 1, acquireTimeoutMs: 2000 });
    const held = await busy.pool.connect();
    try {
      assertRetryable(await thrownBy(() => busy.prisma.payment.count()));
    } finally {
      held.release();
      await busy.close();
    }
  });

  test('business refusals keep their own type, and a plain error passes through for the retry policy', async () => {
    const plain = new Error('rpc timeout');
    assert.equal(await thrownBy(() => Promise.reject(plain)), plain);
    const typed = ApplicationFailure.create({ type: 'payment_not_cancelable', nonRetryable: true });
    assert.equal(await thrownBy(() => Promise.reject(typed)), typed);
  });
});
