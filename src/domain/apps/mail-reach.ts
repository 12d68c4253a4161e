/** Whether outgoing mail exists for an environment: SMTP, or the sandbox outbox (docs/decisions/vaults.md). */
export interface MailAvailability {
  smtpConfigured: boolean;
}

/**
 * Whether mail reaches an app's people: SMTP anywhere, or the outbox in the sandbox. What a vault's
 * managed approval code and a partner user's dashboard sign-in code both need.
 */
export function mailReaches(environment: 'sandbox' | 'production', mail: MailAvailability): boolean {
  return mail.smtpConfigured || environment === 'sandbox';
}
