import { defineSignal } from '@temporalio/workflow';

/**
 * Sent by the chain scanner to every Payment and deposit workflow with funds or a settlement leg in
 * flight when it has read new blocks (the argument: the newest block read, decimal). The workflow
 * re-reads what it waits on at once instead of at its next timer. Best effort: a lost one costs
 * latency only (the timer is the safety net).
 */
export const chainAdvancedSignal = defineSignal<[string]>('chainAdvanced');
