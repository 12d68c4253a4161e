/**
 * The rules money leaving a vault obeys, pure and property-tested. Every rule gives its verdict (none
 * is skipped because another failed), and the decision is the first rule that failed, in this order:
 * the real authorization (vault-funding.ts), a refund paid from a vault (returns/fund-return-rules.ts)
 * and the policy dry run (vault-policy-evaluation.ts) all decide through these functions.
 */

/** Why a vault can't fund a Payment (reasonCode of a 422 payment_method_not_supported). */
export const FUNDING_REFUSALS = [
  'vault_missing',
  'vault_policy_inactive',
  'vault_token_not_allowed',
  'vault_spend_limit_exceeded',
  'vault_insufficient_balance',
  'payment_not_fundable',
] as const;
export type FundingRefusal = (typeof FUNDING_REFUSALS)[number];

/** Named after the policy's fields (spendLimit, allowedTokens, managedApproval) where one decides. */
export const VAULT_POLICY_RULES = [
  'payment',
  'destination',
  'policy_active',
  'allowed_tokens',
  'spend_limit',
  'available_balance',
  'managed_approval',
] as const;
export type VaultPolicyRule = (typeof VAULT_POLICY_RULES)[number];
export const RULE_VERDICTS = ['pass', 'fail', 'not_applicable'] as const;
export type RuleVerdict = (typeof RULE_VERDICTS)[number];

export interface RuleResult {
  rule: VaultPolicyRule;
  verdict: RuleVerdict;
  /** The refusal this rule answers when it fails; null otherwise. */
  reasonCode: FundingRefusal | null;
  detail: string;
}

/** What the vault's policy weighs, for any money leaving the vault. */
export interface PolicyFacts {
  policyActive: boolean;
  tokenAllowed: boolean;
  limitAtomic: bigint;
  spentInPeriodAtomic: bigint;
  /** The vault's balance of the token less what its funding and refunds in flight reserve. */
  availableAtomic: bigint;
  amountAtomic: bigint;
}

export interface FundingFacts extends PolicyFacts {
  /**
   * The Payment is an open receive Payment with an escrow (requires_payment_method, not expired);
   * null when no Payment is named (a dry run of a would-be spend). Absent: as null.
   */
  paymentOpen?: boolean | null;
  /** The recipient is not the vault's own account (a payer never pays itself). Absent: true. */
  destinationAllowed?: boolean;
}

type Verdict = Omit<RuleResult, 'rule'>;
const verdict = (ok: boolean, reason: FundingRefusal, detail: string): Verdict =>
  ok ? { verdict: 'pass', reasonCode: null, detail } : { verdict: 'fail', reasonCode: reason, detail };
const notApplicable = (detail: string): Verdict => ({ verdict: 'not_applicable', reasonCode: null, detail });

/** The policy's own rules: active, the token allowed, the period's limit, the available balance. */
export function policyRules(f: PolicyFacts): RuleResult[] {
  const after = f.spentInPeriodAtomic + f.amountAtomic;
  const noPolicy = 'The vault has no active policy';
  return [
    {
      rule: 'policy_active',
      ...verdict(f.policyActive, 'vault_policy_inactive', f.policyActive ? 'The policy is active' : noPolicy),
    },
    {
      rule: 'allowed_tokens',
      ...(f.policyActive
        ? verdict(f.tokenAllowed, 'vault_token_not_allowed', `The policy ${f.tokenAllowed ? 'allows' : 'does not allow'} this token`)
        : notApplicable(noPolicy)),
    },
    {
      rule: 'spend_limit',
      ...(f.policyActive
        ? verdict(
            after <= f.limitAtomic,
            'vault_spend_limit_exceeded',
            `${f.spentInPeriodAtomic} authorized in this period + ${f.amountAtomic} ${after <= f.limitAtomic ? 'is within' : 'exceeds'} the limit of ${f.limitAtomic} (atomic units)`,
          )
        : notApplicable(noPolicy)),
    },
    {
      rule: 'available_balance',
      // Read from the chain only for a spend the policy allows the token of.
      ...(f.policyActive && f.tokenAllowed
        ? verdict(
            f.availableAtomic >= f.amountAtomic,
            'vault_insufficient_balance',
            `${f.availableAtomic} available ${f.availableAtomic >= f.amountAtomic ? 'covers' : 'does not cover'} ${f.amountAtomic} (atomic units)`,
          )
        : notApplicable(f.policyActive ? 'The token is not allowed' : noPolicy)),
    },
  ];
}

/** The Payment and its recipient, then the policy's rules, then the (per-policy, not per-spend) approval. */
export function fundingRules(f: FundingFacts): RuleResult[] {
  const open = f.paymentOpen ?? null;
  const payment: RuleResult =
    f.amountAtomic <= 0n
      ? { rule: 'payment', verdict: 'fail', reasonCode: 'payment_not_fundable', detail: 'The amount is not positive' }
      : open === null
        ? { rule: 'payment', ...notApplicable('No Payment named') }
        : {
            rule: 'payment',
            ...verdict(
              open,
              'payment_not_fundable',
              open ? 'The Payment is open to vault funding' : 'The Payment cannot be funded from a vault now',
            ),
          };
  const allowed = f.destinationAllowed ?? true;
  return [
    payment,
    {
      rule: 'destination',
      ...verdict(
        allowed,
        'payment_not_fundable',
        allowed ? "The recipient is not the vault's own account" : "The recipient is the vault's own account",
      ),
    },
    ...policyRules(f),
    {
      rule: 'managed_approval',
      ...notApplicable("The policy's email approval is asked when the policy changes, not for each spend"),
    },
  ];
}

/** The decision: the first rule that failed refuses, with its reasonCode. */
export function decisionOf(rules: readonly RuleResult[]): { ok: true } | { ok: false; reason: FundingRefusal } {
  const failed = rules.find((r) => r.verdict === 'fail');
  return failed ? { ok: false, reason: failed.reasonCode! } : { ok: true };
}

/** The one funding rule: the real authorization and the dry run both decide through it. */
export function decideFunding(f: FundingFacts): { ok: true } | { ok: false; reason: FundingRefusal } {
  return decisionOf(fundingRules(f));
}
