import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ApiMiddleware } from '../context';

const tracer = trace.getTracer('partner-payments-api');

/**
 * The request's span (src/telemetry/tracing.ts), parent of everything the request does: its SQL,
 * the workflow it starts or signals (Temporal's client interceptor carries the context into the
 * workflow's headers). A caller's `traceparent` continues the caller's trace. Named by the route
 * matched, never the path, so ids don't become span names. A no-op while tracing is off.
 */
export function requestSpan(): ApiMiddleware {
  return async (ctx, next) => {
    const parent = trace.getSpan(context.active()) ? context.active() : propagation.extract(context.active(), ctx.headers);
    const span = tracer.startSpan(
      `${ctx.method}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method, 'url.path': ctx.path } },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), next);
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute;
      if (route) span.updateName(`${ctx.method} ${route}`);
      span.setAttribute('http.response.status_code', ctx.status);
      if (ctx.state.requestId) span.setAttribute('request.id', ctx.state.requestId);
      if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}
