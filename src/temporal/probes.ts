import { Client, Connection } from '@temporalio/client';
import type { PaymentStart } from '../domain/engine/pure/engine';
import { PAYMENT_WORKFLOW, paymentWorkflowId, paymentWorkflowInput } from '../../workflows/contracts/payment';
import { temporalInterceptors } from './deadlines';
import { DEFAULT_RPC_TIMEOUT_MS } from './gateway';

export const PROBE_TASK_QUEUE = 'engine-probe';
/** Probe workflows (the bench's baselines) are closed by the server after this. */
export const PROBE_LIFETIME = '30 seconds';

/**
 * What tests and the benchmark ask of the engine beyond the service's own operations. Kept off the
 * gateway, so nothing the service runs can reach them.
 */
export interface EngineProbes {
  /** A workflow's event history (replay tests). */
  workflowHistory(workflowId: string): ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>;
  /** Starts a no-op workflow on a queue no worker polls: the engine's bare start cost. */
  startProbeWorkflow(workflowId: string): Promise<void>;
  /** The benchmark's fair baseline: a PaymentWorkflow start the worker runs, closed by the server after PROBE_LIFETIME. */
  startPaymentProbe(payment: PaymentStart, confirmations: number): Promise<void>;
}

export function createEngineProbes(client: Client, taskQueue: string): EngineProbes {
  return {
    workflowHistory: (workflowId) => client.workflow.getHandle(workflowId).fetchHistory(),
    async startProbeWorkflow(workflowId) {
      await client.workflow.start('engineProbe', { taskQueue: PROBE_TASK_QUEUE, workflowId, workflowExecutionTimeout: PROBE_LIFETIME });
    },
    async startPaymentProbe(payment, confirmations) {
      await client.workflow.start(PAYMENT_WORKFLOW, {
        taskQueue,
        workflowId: paymentWorkflowId(payment.id),
        args: [paymentWorkflowInput(payment, confirmations, {})],
        workflowExecutionTimeout: PROBE_LIFETIME,
      });
    },
  };
}

/** The probes on a connection of their own (the benchmark); close() ends it. */
export async function connectEngineProbes(opts: {
  address: string;
  namespace: string;
  taskQueue: string;
}): Promise<EngineProbes & { close(): Promise<void> }> {
  const connection = await Connection.connect({
    address: opts.address,
    connectTimeout: '10s',
    interceptors: temporalInterceptors(DEFAULT_RPC_TIMEOUT_MS),
  });
  const probes = createEngineProbes(new Client({ connection, namespace: opts.namespace }), opts.taskQueue);
  return Object.assign(probes, { close: () => connection.close() });
}
