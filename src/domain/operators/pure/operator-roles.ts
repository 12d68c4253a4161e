/**
 * What each operator role may do. Roles are ranked: each holds the rights of those below it.
 * viewer reads; operator releases holds and manages webhooks; approver also approves another
 * operator's money-moving request; admin also manages apps' credentials and dashboard users.
 */
export const OPERATOR_ROLES = ['viewer', 'operator', 'approver', 'admin'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

export function hasRole(role: OperatorRole, needed: OperatorRole): boolean {
  return OPERATOR_ROLES.indexOf(role) >= OPERATOR_ROLES.indexOf(needed);
}

/** The one exception to ranks: nobody approves their own request. */
export function mayApprove(approver: { id: string; role: OperatorRole }, requestedBy: string): boolean {
  return hasRole(approver.role, 'approver') && approver.id !== requestedBy;
}
