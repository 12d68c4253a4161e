import type { Duration } from '@temporalio/common';
import { NativeConnection, Runtime, Worker, type TelemetryOptions, type WorkflowBundleOption } from '@temporalio/worker';

import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { tracingStarted } from '../telemetry/tracing';
import { WORKFLOW_TRACING_MODULE } from './workflow-bundle';

export { bundleWorkflows, WORKFLOWS_PATH } from './workflow-bundle';

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: object;
  workflowBundle: WorkflowBundleOption;
  /**
   * 0 turns off the workflow cache (and so sticky task queues). The time-skipping test server never
   * moves a dead worker's sticky tasks back, so the harness's kill-and-restart test needs this.
   */
  maxCachedWorkflows?: number;
  /**
   * How long a shutdown lets running activities finish and report. An activity abandoned at shutdown
   * stays "started" on the server until its timeout (on the time-skipping test server it also holds
   * time still until then).
   */
  shutdownGraceTime?: Duration;
  /** The SDK's shared V8 context for workflows; unset: the SDK's default. */
  reuseV8Context?: boolean;
}

/**
 * How long one workflow activation may run in its V8 context before the SDK stops it (its default is
 * 5 s of wall-clock time). On Node the stop fires a vm timeout in a workflow thread that has async
 * hooks, and that aborts the whole worker process ("async hook stack has become corrupted"). On a
 * busy machine an activation can take more than 5 s without being stuck, so the limit is far above
 * the 10 s workflow task timeout: only code that never yields reaches it.
 */
export const WORKFLOW_ACTIVATION_LIMIT: Duration = '60s';

/** The one worker: every workflow and activity of the service on one task queue. */
export async function createWorker(opts: WorkerOptions): Promise<Worker> {
  // The SDK takes the limit but leaves it out of its public options type.
  const options: Parameters<typeof Worker.create>[0] & { isolateExecutionTimeout: Duration } = {
    isolateExecutionTimeout: WORKFLOW_ACTIVATION_LIMIT,
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    workflowBundle: opts.workflowBundle,
    activities: opts.activities,
    ...(opts.maxCachedWorkflows === undefined ? {} : { maxCachedWorkflows: opts.maxCachedWorkflows }),
    ...(opts.shutdownGraceTime === undefined ? {} : { shutdownGraceTime: opts.shutdownGraceTime }),
    ...(opts.reuseV8Context === undefined ? {} : { reuseV8Context: opts.reuseV8Context }),
  };
  return Worker.create({ ...options, ...workerTracing() });
}

/**
 * While tracing is on: a span for each workflow task and activity, in the trace the workflow's
 * start carried; the workflow's spans leave its sandbox through the `exporter` sink. The bundle then
 * holds the workflow interceptors (workflow-bundle.ts).
 */
function workerTracing(): Pick<Parameters<typeof Worker.create>[0], 'interceptors' | 'sinks'> {
  const tracing = tracingStarted();
  if (!tracing) return {};
  return {
    interceptors: {
      workflowModules: [WORKFLOW_TRACING_MODULE],
      activity: [
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
    sinks: { exporter: makeWorkflowExporter(asWorkflowSpanSink(tracing.spanProcessor), tracing.resource as never) },
  };
}

/** A span as the workflow sandbox hands it over: OpenTelemetry SDK 1's shape (Temporal's interceptors use it). */
interface SandboxSpan {
  spanContext(): { traceId: string; spanId: string; traceFlags: number };
  parentSpanId?: string;
  instrumentationLibrary?: { name: string; version?: string };
}

/**
 * The workflow's spans into this process's SDK 2 processor: SDK 2 reads the parent from
 * `parentSpanContext` and the scope from `instrumentationScope`, where SDK 1 had `parentSpanId` and
 * `instrumentationLibrary`. Without this the workflow's spans would lose their parent.
 */
function asWorkflowSpanSink(processor: SpanProcessor): never {
  const adapted = {
    onStart: () => undefined,
    forceFlush: () => processor.forceFlush(),
    shutdown: () => processor.shutdown(),
    onEnd(span: SandboxSpan) {
      const { traceId } = span.spanContext();
      processor.onEnd({
        ...span,
        parentSpanContext: span.parentSpanId ? { traceId, spanId: span.parentSpanId, traceFlags: 1 } : undefined,
        instrumentationScope: span.instrumentationLibrary ?? { name: '@temporalio/interceptors-opentelemetry' },
      } as unknown as ReadableSpan);
    },
  };
  return adapted as never;
}

export async function connectWorkerConnection(address: string): Promise<NativeConnection> {
  return NativeConnection.connect({ address });
}

let installed: { metricsUrl: string } | undefined;

/**
 * The Temporal runtime's Prometheus exporter: core serves its worker, workflow and activity metrics
 * (temporal_*, Temporal's own names, so its published SDK dashboards work) at http://<bindAddress>/metrics.
 */
export function prometheusTelemetry(bindAddress: string): { telemetryOptions: TelemetryOptions; metricsUrl: string } {
  return {
    telemetryOptions: { metrics: { prometheus: { bindAddress } } },
    // Bound to every interface, it is read locally.
    metricsUrl: `http://${bindAddress.replace(/^(0\.0\.0\.0|\[::\]):/, '127.0.0.1:')}/metrics`,
  };
}

/**
 * Installs the process's Temporal runtime, once, before the first worker (Runtime.install must come
 * first). Its own shutdown on SIGINT/SIGTERM is off: the service's lifecycle drains the worker once, in
 * order (src/runtime/lifecycle.ts); left on, a signal started a drain that the service's stop then
 * tried again ("Not running. Current state: DRAINING"). Core serves its metrics at metricsBindAddress;
 * answers where.
 */
export function installWorkerRuntime(opts: { metricsBindAddress: string }): { metricsUrl: string } {
  if (installed) return installed;
  const telemetry = prometheusTelemetry(opts.metricsBindAddress);
  Runtime.install({ shutdownSignals: [], telemetryOptions: telemetry.telemetryOptions });
  installed = { metricsUrl: telemetry.metricsUrl };
  return installed;
}
