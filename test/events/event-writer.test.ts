import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeEvents, type EventSubject } from '../../src/domain/events';
import { getHarness } from '../support/harness';

test('the event writer writes a step once, however often it is retried, and each step of a resource apart', async () => {
  const h = await getHarness();
  const subject: EventSubject = { appId: `app_${randomUUID()}`, apiVersion: h.environments.apiVersion, accountId: null, resourceType: 'account', resourceId: `acct_${randomUUID()}` };
  const write = (step: string) => h.db.prisma.$transaction((tx) => writeEvents(tx, subject, step, [{ name: 'account.updated', payload: { step } }]));

  const first = await write('v1');
  const retried = await write('v1');
  const next = await write('v2');

  assert.deepEqual(retried, first, 'a retried step names the same event');
  assert.notDeepEqual(next, first);
  const rows = await h.db.prisma.event.findMany({ where: { resourceId: subject.resourceId }, orderBy: { sequence: 'asc' } });
  assert.deepEqual(rows.map((r) => [r.id, (r.payload as { step: string }).step]), [
    [first[0], 'v1'],
    [next[0], 'v2'],
  ]);
});

test('an event exists only if the transaction that wrote it committed', async () => {
  const h = await getHarness();
  const subject: EventSubject = { appId: `app_${randomUUID()}`, apiVersion: h.environments.apiVersion, accountId: null, resourceType: 'account', resourceId: `acct_${randomUUID()}` };
  await assert.rejects(
    h.db.prisma.$transaction(async (tx) => {
      await writeEvents(tx, subject, 'v1', [{ name: 'account.updated', payload: {} }]);
      throw new Error('the state change failed');
    }),
    /state change failed/,
  );
  assert.equal(await h.db.prisma.event.count({ where: { resourceId: subject.resourceId } }), 0);
});
