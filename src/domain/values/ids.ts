import { randomBytes } from 'node:crypto';

/** The spec's id prefixes. Ids are opaque: prefix + 22 base62 characters (~131 bits). */
export const ID_PREFIXES = {
  account: 'acct_',
  payment: 'payment_',
  paymentOption: 'pay_option_',
  fundingOperation: 'pay_funding_',
  transaction: 'txn_',
  deposit: 'deposit_',
  depositAddress: 'deposit_addr_',
  bankAccount: 'bank_account_',
  handle: 'handle_',
  wallet: 'wallet_',
  settlementProfile: 'settle_',
  settlementDestination: 'destination_',
  app: 'app_',
  event: 'evt_',
  delivery: 'dlv_',
  webhookEndpoint: 'whe_',
  ledgerEntry: 'entry_',
  ledgerPosting: 'posting_',
  nextAction: 'action_',
  paymentTransfer: 'ptr_',
  operatorAlert: 'alert_',
  vault: 'vault_',
  vaultPolicy: 'vault_policy_',
  vaultAuditEvent: 'vault_evt_',
  vaultApprovalCode: 'vault_otp_',
  vaultReceipt: 'vault_rcpt_',
  sandboxMail: 'mail_',
  // Not shown in the spec (docs/decisions/refunds-and-recoveries.md "Refunds and incident recovery").
  refund: 'refund_',
  incidentRecovery: 'recovery_',
  // Internal: the operator audit (docs/decisions/dashboard-and-console.md "Operator console").
  operatorAction: 'opact_',
  consoleSession: 'csess_',
  operator: 'op_',
  operatorToken: 'optok_',
  operatorSignInCode: 'opsign_',
  operatorApproval: 'approval_',
  // Internal: the partner dashboard (docs/decisions/dashboard-and-console.md "The partner dashboard").
  partnerUser: 'puser_',
  partnerSignInCode: 'psign_',
  partnerSession: 'psess_',
  partnerAction: 'pact_',
  requestLogEntry: 'reqlog_',
  // Not shown in the spec (docs/decisions/sandbox-clock.md).
  sandboxClockMove: 'clock_move_',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function randomToken(length: number): string {
  // Rejection sampling keeps every character uniformly likely.
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}${randomToken(22)}`;
}
