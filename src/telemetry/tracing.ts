import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/**
 * Traces (docs/decisions/operations.md "Traces"): OpenTelemetry, exported by OTLP over HTTP when
 * OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, and off otherwise, so an
 * untraced process pays nothing. One trace runs from a partner's request through the workflow start,
 * each workflow task and activity (Temporal's interceptors, src/temporal/), and their SQL (pg) and
 * outgoing HTTP and fetch calls (the chain's RPC, webhooks, the off-ramp provider).
 */
export interface Tracing {
  /** Where the worker's workflow spans go (they leave the workflow sandbox through a sink). */
  spanProcessor: SpanProcessor;
  resource: Resource;
  /** Exports what is buffered; the process's spans end here. */
  shutdown(): Promise<void>;
}

let current: Tracing | null = null;

/** The tracing this process started, or null: tracing is off. */
export const tracingStarted = (): Tracing | null => current;

/**
 * Starts tracing once per process when an OTLP endpoint is set; answers null otherwise. Called first
 * thing at start-up, before pg and http are loaded, so that their calls are instrumented.
 */
export function startTracing(env: NodeJS.ProcessEnv = process.env): Tracing | null {
  if (current) return current;
  if (!(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT)) return null;
  const resource = resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || 'partner-payments' });
  // The exporter reads the endpoint, headers and timeout from the standard OTEL_EXPORTER_OTLP_* settings.
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter());
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // Global tracer, W3C trace context propagation and an AsyncLocalStorage context manager.
  provider.register();
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      // Incoming requests get their span from the API's own middleware (with the route's name).
      new HttpInstrumentation({ disableIncomingRequestInstrumentation: true }),
      new PgInstrumentation(),
      new UndiciInstrumentation(),
    ],
  });
  current = { spanProcessor, resource, shutdown: () => provider.shutdown() };
  return current;
}
