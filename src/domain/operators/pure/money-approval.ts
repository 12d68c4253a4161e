/**
 * Which operator actions move money somewhere automation would not, and so wait for a second
 * operator (docs/decisions/dashboard-and-console.md "Two people move money"): a recovery to an address
 * that is not the payer's, any mark-settled (money recorded as paid out by hand), and failing a
 * Payment whose escrow holds funds. Pure: the caller reads the facts.
 */
export const APPROVAL_TTL_SECONDS = 4 * 3600;

export type MoneyAction =
  | { action: 'recover-incident'; destinationAddress?: string; payers: readonly string[] }
  | { action: 'retry' | 'mark-settled' | 'fail'; target: 'payment' | 'deposit' | 'fund_return'; fundedPayment: boolean };

export function needsSecondOperator(a: MoneyAction): boolean {
  if (a.action === 'recover-incident') {
    if (a.destinationAddress === undefined) return false;
    const to = a.destinationAddress.toLowerCase();
    return !a.payers.some((p) => p.toLowerCase() === to);
  }
  if (a.action === 'mark-settled') return true;
  return a.action === 'fail' && a.target === 'payment' && a.fundedPayment;
}

/** failed: approved, but the action was refused when carried out (its item had moved on); nothing was done. */
export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired' | 'failed';

/** A pending request past its deadline is expired, whether or not a row says so yet. */
export function statusAt(row: { status: string; expiresAt: Date }, now: Date): ApprovalStatus {
  return row.status === 'pending' && row.expiresAt <= now ? 'expired' : (row.status as ApprovalStatus);
}
