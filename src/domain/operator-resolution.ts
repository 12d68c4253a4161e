/**
 * How an operator releases a requires_intervention hold, for Payments and deposits alike: retry the
 * settlement, record one paid out by hand (mark-settled, with its tx hash), or fail it.
 */
export type OperatorAction =
  | { action: 'retry' }
  | { action: 'mark-settled'; txHash: string }
  | { action: 'fail'; reason: string };

export const RESOLUTION_ACTIONS = ['retry', 'mark-settled', 'fail'] as const;
export type TResolutionAction = (typeof RESOLUTION_ACTIONS)[number];

/** The resolution a workflow receives in a signal, as the machine's action. */
export function toOperatorAction(request: { action: TResolutionAction; txHash?: string; reason?: string }): OperatorAction {
  if (request.action === 'retry') return { action: 'retry' };
  if (request.action === 'mark-settled') return { action: 'mark-settled', txHash: request.txHash ?? '' };
  return { action: 'fail', reason: request.reason ?? 'failed by operator' };
}
