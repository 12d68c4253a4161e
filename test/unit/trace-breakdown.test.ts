import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { breakdown } from '../../bench/trace-breakdown';
import type { OtlpSpan } from '../support/otlp-receiver';

const ms = (n: number) => String(BigInt(Math.round(n * 1e6)));
function span(traceId: string, spanId: string, name: string, from: number, to: number, extra: Partial<OtlpSpan> = {}): OtlpSpan {
  return { traceId, spanId, name, startTimeUnixNano: ms(from), endTimeUnixNano: ms(to), service: 'api', ...extra };
}
const status = (code: number) => ({ attributes: [{ key: 'http.response.status_code', value: { intValue: code } }] });
const sql = { attributes: [{ key: 'db.system.name', value: { stringValue: 'postgresql' } }] };

describe('where a request’s time goes, from its trace', () => {
  test('each step, its SQL and the workflow start are the request’s; the rest is outside the steps; other services and answers are not counted', () => {
    const spans: OtlpSpan[] = [
      span('t1', 'r', 'POST /v2/payments', 0, 40, status(201)),
      span('t1', 'c', 'step.idempotency_claim', 1, 5, { parentSpanId: 'r' }),
      span('t1', 'c1', 'pg.query', 2, 4, { parentSpanId: 'c', ...sql }),
      span('t1', 's', 'step.workflow_start', 10, 30, { parentSpanId: 'r' }),
      span('t1', 's1', 'StartWorkflow:paymentWorkflow', 11, 29, { parentSpanId: 's' }),
      span('t1', 'w', 'RunActivity:x', 50, 60, { parentSpanId: 's1', service: 'worker' }),
      span('t1', 'w1', 'pg.query', 51, 59, { parentSpanId: 'w', service: 'worker', ...sql }),
      span('t2', 'r2', 'POST /v2/payments', 0, 3, status(503)),
    ];
    const b = breakdown(spans, 'api', 'POST /v2/payments', 201);
    assert.equal(b.requests, 1);
    assert.deepEqual(Object.fromEntries(b.parts), {
      total: [40],
      'step.idempotency_claim': [4],
      'step.workflow_start': [20],
      'workflow start': [18],
      sql: [2],
      'outside the steps': [16],
    });
    assert.deepEqual(b.statements, [1]);
  });
});
