import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { temporal } from '@temporalio/proto';
import { workOutAtEnd as countOut } from '../support/engine-clock';

// Event ids are Longs in the proto types; the count reads them as text.
const workOutAtEnd = (events: object[]) => countOut(events as unknown as temporal.api.history.v1.IHistoryEvent[]);

const scheduled = (eventId: number) => ({ eventId, activityTaskScheduledEventAttributes: {} });
const task = { workflowTaskScheduledEventAttributes: {} };
const taskDone = { workflowTaskCompletedEventAttributes: {} };

test('a run that ended resting had nothing out', () => {
  assert.equal(
    workOutAtEnd([task, taskDone, scheduled(5), { activityTaskCompletedEventAttributes: { scheduledEventId: 5 } }, task, taskDone]),
    0,
  );
});

test('an open workflow task and each activity never closed count one each', () => {
  const events = [
    task,
    taskDone,
    scheduled(5),
    scheduled(6),
    scheduled(7),
    { activityTaskFailedEventAttributes: { scheduledEventId: 6 } },
    { activityTaskTimedOutEventAttributes: { scheduledEventId: 7 } },
    task,
    { workflowExecutionTerminatedEventAttributes: {} },
  ];
  assert.equal(workOutAtEnd(events), 2);
});

test('a failed or timed-out workflow task is closed; the one scheduled after it is open', () => {
  assert.equal(workOutAtEnd([task, { workflowTaskFailedEventAttributes: {} }]), 0);
  assert.equal(workOutAtEnd([task, { workflowTaskTimedOutEventAttributes: {} }, task]), 1);
});
