import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeHistory, HISTORIES_DIR } from '../support/record-histories';
import { engineWork, flowEngineWork, runEnded, type History } from '../../bench/engine-work';

/** A recorded baseline history, decoded as the replay test decodes it (what fetchHistory answers). */
const recorded = (name: string) =>
  decodeHistory(
    (JSON.parse(readFileSync(path.join(HISTORIES_DIR, '2026-11-27-baseline', `${name}.json`), 'utf8')) as { history: unknown }).history,
  ) as History;

const started = (type: string) => ({ workflowExecutionStartedEventAttributes: { workflowType: { name: type } } });
const taskDone = { workflowTaskCompletedEventAttributes: {} };

describe('engine work per flow, from workflow histories', () => {
  test('the recorded baseline flows: receive Payment succeeded 14/9/78, deposit settled 10/9/59, webhook first attempt 2xx 2/1/11', () => {
    assert.deepEqual(flowEngineWork([recorded('payment--receive-succeeded-normal-clean')]), {
      workflowTypes: ['paymentWorkflow'],
      workflowTasks: 14,
      activityTasks: 9,
      localActivities: 0,
      historyEvents: 78,
    });
    assert.deepEqual(flowEngineWork([recorded('deposit--settled-confirmed')]), {
      workflowTypes: ['depositWorkflow'],
      workflowTasks: 10,
      activityTasks: 9,
      localActivities: 0,
      historyEvents: 59,
    });
    // Recorded with the first attempt as an ordinary activity (the test harness's setting).
    assert.deepEqual(flowEngineWork([recorded('webhook-delivery--succeeded-round1')]), {
      workflowTypes: ['webhookDelivery'],
      workflowTasks: 2,
      activityTasks: 1,
      localActivities: 0,
      historyEvents: 11,
    });
  });

  test("a flow of several runs sums them and lists each run's workflow type", () => {
    const funding = recorded('vault-funding--confirmed');
    assert.deepEqual(engineWork(funding), { workflowTasks: 5, activityTasks: 3, localActivities: 0, historyEvents: 28 });
    assert.deepEqual(flowEngineWork([recorded('payment--receive-succeeded-normal-clean'), funding]), {
      workflowTypes: ['paymentWorkflow', 'vaultFundingWorkflow'],
      workflowTasks: 19,
      activityTasks: 12,
      localActivities: 0,
      historyEvents: 106,
    });
  });

  test('local activities are their markers, not patch markers; failed and timed-out tasks are counted apart', () => {
    const history: History = {
      events: [
        started('webhookDelivery'),
        { workflowTaskScheduledEventAttributes: {} },
        { workflowTaskTimedOutEventAttributes: {} },
        { workflowTaskScheduledEventAttributes: {} },
        { workflowTaskFailedEventAttributes: {} },
        { workflowTaskScheduledEventAttributes: {} },
        taskDone,
        { markerRecordedEventAttributes: { markerName: 'core_patch' } },
        { markerRecordedEventAttributes: { markerName: 'core_local_activity' } },
        { workflowExecutionCompletedEventAttributes: {} },
      ],
    };
    assert.deepEqual(flowEngineWork([history]), {
      workflowTypes: ['webhookDelivery'],
      workflowTasks: 1,
      activityTasks: 0,
      localActivities: 1,
      historyEvents: 10,
      failedWorkflowTasks: 1,
      timedOutWorkflowTasks: 1,
    });
  });

  test('a run is ended once closed, not while running or when it continued as new', () => {
    const payment = recorded('payment--receive-succeeded-normal-clean');
    assert.equal(runEnded(payment), true);
    assert.equal(runEnded({ events: payment.events!.slice(0, -1) }), false);
    assert.equal(
      runEnded({ events: [started('paymentWorkflow'), taskDone, { workflowExecutionContinuedAsNewEventAttributes: {} }] }),
      false,
    );
    assert.equal(runEnded({ events: [] }), false);
  });
});
