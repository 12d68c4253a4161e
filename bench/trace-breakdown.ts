import { isSql, spanMs, type OtlpSpan } from '../test/support/otlp-receiver';

/** Where one kind of request's time went, from its traces: each part's milliseconds, one sample per request. */
export interface Breakdown {
  requests: number;
  /** Part name → one sample per request (0 where a request had none of it). */
  parts: Map<string, number[]>;
  /** SQL statements per request, one sample each. */
  statements: number[];
}

const intAttr = (span: OtlpSpan, key: string): number | undefined => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value === undefined ? undefined : Number(value.intValue ?? value.doubleValue ?? value.stringValue);
};

/**
 * The parts of each `requestName` span of `service` that answered `status`: `total` (the request span),
 * each `step.*` span (summed per name), `sql` (every statement in the request, summed),
 * `workflow start` (Temporal's StartWorkflow client span) and `outside the steps` (total less the
 * steps directly under the request: middleware, parsing, serialising and the event loop's waits).
 * Spans of other services in the trace (the worker's) are not the request's. Pure.
 */
export function breakdown(spans: readonly OtlpSpan[], service: string, requestName: string, status: number): Breakdown {
  const byTrace = new Map<string, OtlpSpan[]>();
  for (const span of spans) if (span.service === service) byTrace.set(span.traceId, [...(byTrace.get(span.traceId) ?? []), span]);
  const requests = spans.filter(
    (s) => s.service === service && s.name === requestName && intAttr(s, 'http.response.status_code') === status,
  );
  const parts = new Map<string, number[]>();
  const add = (name: string, i: number, ms: number) => {
    const samples = parts.get(name) ?? Array.from({ length: requests.length }, () => 0);
    samples[i] = (samples[i] ?? 0) + ms;
    parts.set(name, samples);
  };
  const statements: number[] = [];
  requests.forEach((request, i) => {
    const inTrace = byTrace.get(request.traceId) ?? [];
    add('total', i, spanMs(request));
    let stepsMs = 0;
    for (const span of inTrace) {
      if (span.name.startsWith('step.')) {
        add(span.name, i, spanMs(span));
        if (span.parentSpanId === request.spanId) stepsMs += spanMs(span);
      } else if (span.name.startsWith('StartWorkflow:')) add('workflow start', i, spanMs(span));
    }
    const sql = inTrace.filter(isSql);
    add(
      'sql',
      i,
      sql.reduce((sum, s) => sum + spanMs(s), 0),
    );
    add('outside the steps', i, Math.max(0, spanMs(request) - stepsMs));
    statements.push(sql.length);
  });
  return { requests: requests.length, parts, statements };
}
