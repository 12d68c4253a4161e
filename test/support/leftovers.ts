import { DEPOSIT_WORKFLOW } from '../../workflows/contracts/deposit';
import { PAYMENT_WORKFLOW } from '../../workflows/contracts/payment';
import { openWorkflows } from './diagnose';
import type { Harness } from './harness';

/**
 * The Payment and deposit workflows still running when a suite process ends: each one wakes on every
 * later time skip, so a test that leaves many slows every test after it. Printed, not asserted.
 */
export async function reportLeftovers(h: Harness): Promise<void> {
  const running = (await openWorkflows(h))
    .filter((e) => e.type?.name === PAYMENT_WORKFLOW || e.type?.name === DEPOSIT_WORKFLOW)
    .map((e) => e.execution?.workflowId ?? '?');
  console.log(`# workflows still running at the end: ${running.length} Payments and deposits`);
  if (process.env.TEST_LEFTOVERS === '1') for (const id of running) console.log(`#   ${id}`);
}
