/**
 * How an operator releases a requires_intervention hold, for Payments, deposits and fund returns alike: retry the
 * settlement, record one paid out by hand (mark-settled, with its tx hash), or fail it. Pure: the
 * workflows import this file.
 */
export const RESOLUTION_ACTIONS = ['retry', 'mark-settled', 'fail'] as const;
export type ResolutionAction = (typeof RESOLUTION_ACTIONS)[number];

/** What an operator sends (the resolve signal of a Payment or a deposit): what, and who asked. */
export interface ResolutionRequest {
  action: ResolutionAction;
  txHash?: string;
  reason?: string;
  actor: string;
}

/** The same request as the state machines take it. */
export type OperatorAction = { action: 'retry' } | { action: 'mark-settled'; txHash: string } | { action: 'fail'; reason: string };

export function toOperatorAction(request: Pick<ResolutionRequest, 'action' | 'txHash' | 'reason'>): OperatorAction {
  if (request.action === 'retry') return { action: 'retry' };
  if (request.action === 'mark-settled') return { action: 'mark-settled', txHash: request.txHash ?? '' };
  return { action: 'fail', reason: request.reason ?? 'failed by operator' };
}

/**
 * Only a held resource can be released. A Payment is held by its operational state (its financial
 * status is preserved), a deposit and a fund return (refund, incident recovery) by their status.
 */
export function isHeld(
  resource: { kind: 'payment'; operationalState: string } | { kind: 'deposit' | 'fund_return'; status: string },
): boolean {
  return resource.kind === 'payment' ? resource.operationalState === 'requires_intervention' : resource.status === 'requires_intervention';
}
