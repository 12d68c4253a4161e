import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeEvents, type EventSubject } from '../../src/domain/event-log/events';
import { getHarness } from '../support/harness';
import fc from 'fast-check';

test('the event writer writes a step once, however often it is retried, and each step of a resource apart', async () => {
  const h = await getHarness();
  const subject: EventSubject = {
    appId: `app_${randomUUID()}`,
    apiVersion: h.environments.apiVersion,
    accountId: null,
    resourceType: 'account',
    resourceId: `acct_${randomUUID()}`,
  };
  const write = (step: string) =>
    h.db.prisma.$transaction((tx) => writeEvents(tx, subject, step, [{ name: 'account.updated', payload: { step } }]));

  const first = await write('v1');
  const retried = await write('v1');
  const next = await write('v2');

  assert.deepEqual(retried, first, 'a retried step names the same event');
  assert.notDeepEqual(next, first);
  const rows = await h.db.prisma.event.findMany({ where: { resourceId: subject.resourceId }, orderBy: { sequence: 'asc' } });
  assert.deepEqual(
    rows.map((r) => [r.id, (r.payload as { step: string }).step]),
    [
      [first[0], 'v1'],
      [next[0], 'v2'],
    ],
  );
});

test('an event exists only if the transaction that wrote it committed', async () => {
  const h = await getHarness();
  const subject: EventSubject = {
    appId: `app_${randomUUID()}`,
    apiVersion: h.environments.apiVersion,
    accountId: null,
    resourceType: 'account',
    resourceId: `acct_${randomUUID()}`,
  };
  await assert.rejects(
    h.db.prisma.$transaction(async (tx) => {
      await writeEvents(tx, subject, 'v1', [{ name: 'account.updated', payload: {} }]);
      throw new Error('the state change failed');
    }),
    /state change failed/,
  );
  assert.equal(await h.db.prisma.event.count({ where: { resourceId: subject.resourceId } }), 0);
});

test('each resource numbers its events 1, 2, 3... without gaps, whatever the concurrency, retries and rollbacks (property)', async () => {
  const h = await getHarness();
  const appId = `app_${randomUUID()}`;
  const resources = [0, 1, 2].map(() => `acct_${randomUUID()}`);
  const subjectOf = (r: number): EventSubject => ({
    appId,
    apiVersion: h.environments.apiVersion,
    accountId: null,
    resourceType: 'account',
    resourceId: resources[r]!,
  });
  // A write: a resource, how many events in its step, a step name (a repeated name is a retry), and
  // whether its transaction rolls back.
  const write = fc.record({
    resource: fc.integer({ min: 0, max: 2 }),
    events: fc.integer({ min: 1, max: 3 }),
    step: fc.integer({ min: 0, max: 5 }),
    rollsBack: fc.boolean(),
  });
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(write, { minLength: 1, maxLength: 12 }), async (writes) => {
      run += 1;
      const settled = await Promise.allSettled(
        writes.map((w) =>
          h.db.prisma.$transaction(async (tx) => {
            const names = Array.from({ length: w.events }, () => ({ name: 'account.updated' as const, payload: {} }));
            await writeEvents(tx, subjectOf(w.resource), `run${run}:step${w.step}:n${w.events}`, names);
            if (w.rollsBack) throw new Error('rolled back');
          }),
        ),
      );
      assert.ok(
        settled.every((s, i) => (s.status === 'rejected') === writes[i]!.rollsBack),
        'only the rolled-back writes fail',
      );
      for (const resourceId of resources) {
        const rows = await h.db.prisma.event.findMany({ where: { resourceId }, select: { resourceSequence: true } });
        const numbers = rows.map((r) => Number(r.resourceSequence)).sort((a, b) => a - b);
        assert.deepEqual(
          numbers,
          numbers.map((_, i) => i + 1),
          `${resourceId}: ${numbers.join(',')}`,
        );
      }
    }),
    { numRuns: 25 },
  );
});

test('a delivered envelope and the event log carry the same resourceSequence, in the order the changes committed', async () => {
  const h = await getHarness();
  const subject: EventSubject = {
    appId: `app_${randomUUID()}`,
    apiVersion: h.environments.apiVersion,
    accountId: null,
    resourceType: 'account',
    resourceId: `acct_${randomUUID()}`,
  };
  for (const step of ['a', 'b', 'c'])
    await h.db.prisma.$transaction((tx) => writeEvents(tx, subject, step, [{ name: 'account.updated', payload: { step } }]));
  const rows = await h.db.prisma.event.findMany({ where: { resourceId: subject.resourceId }, orderBy: { sequence: 'asc' } });
  assert.deepEqual(
    rows.map((r) => [(r.payload as { step: string }).step, Number(r.resourceSequence)]),
    [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ],
  );
});
