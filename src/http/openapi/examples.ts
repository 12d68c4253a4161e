/**
 * Example values shared by the document's operations. test/api/openapi.test.ts validates every example
 * against the schema it illustrates; test/api/openapi-examples.test.ts sends every request example and
 * compares every response example with the service's real answer (keys, types, and the values the
 * contract or the configuration fixes), so these show what the service answers.
 */
const AT = '2026-09-09T12:00:00.000Z';
const LATER = '2026-09-09T12:10:00.000Z';
/** A client token's expiry: 900 seconds after AT. */
const TOKEN_EXPIRY = '2026-09-09T12:15:00.000Z';
const APP_ID = 'app_4Rk9Wm2Zq7';
// The sandbox network's test USDC (config/environments.json).
const TOKEN = '0xf1108D9fDF3d265B59Bf6Ce7Bf240f99c071ffF5';
const CHAIN_ID = 31337;
export const ACCOUNT_ID = 'acct_7Q2mV9xKp3';
const PAYER_ACCOUNT_ID = 'acct_3Lr8Tq1Nw6';
export const PAYMENT_ID = 'payment_9bF2kLm4Qx';
const ESCROW = '0x8d2b5a1e6c3f4a9b7e0d1c2b3a4f5e6d7c8b9a0f';
const WALLET = '0x2546BcD3c84621e976D8185a91A922aE77ECEc30';
const TX_HASH = '0x3f1c2b4a5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708';

const amount = (amt: string, atomic: string) => ({
  amount: amt,
  amountAtomic: atomic,
  assetType: 'crypto' as const,
  assetCode: 'USDC',
  decimals: 6,
  chainId: CHAIN_ID,
  tokenAddress: TOKEN,
});

const depositInstructions = {
  address: ESCROW,
  chainId: CHAIN_ID,
  tokenAddress: TOKEN,
  assetCode: 'USDC',
  decimals: 6,
  amount: '25',
  amountAtomic: '25000000',
};

/** A receive Payment's escrow funding: the environment's fees (platform 100 bps, partner 50 bps) on 25 USDC. */
const escrowFunding = {
  mode: 'escrow',
  required: amount('25', '25000000'),
  providerPrincipal: amount('25', '25000000'),
  providerFee: amount('0', '0'),
  platformFee: amount('0.25', '250000'),
  partnerFee: amount('0.125', '125000'),
  totalFees: amount('0.375', '375000'),
  exchangeRate: { rate: '1', baseAssetCode: 'USDC', quoteAssetCode: 'USDC' },
  quoteExpiresAt: LATER,
  depositAddress: depositInstructions,
};

export const paymentExample = {
  id: PAYMENT_ID,
  apiVersion: '2026-09-09',
  intent: 'receive',
  amountMode: 'collect_exact',
  status: 'requires_payment_method',
  offrampStatus: null,
  stage: 'awaiting_funds',
  operationalState: 'normal',
  operationalReasonCode: null,
  operationalUpdatedAt: null,
  statusVersion: 1,
  paymentAmount: amount('25', '25000000'),
  sourceAmount: amount('25', '25000000'),
  participants: [{ role: 'recipient', accountId: ACCOUNT_ID }],
  recipientDisplay: { displayName: 'Corner Bakery', logoUrl: null },
  destination: { type: 'upa', accountId: ACCOUNT_ID },
  settlement: {
    type: 'settlement_destination',
    settlementDestinationId: 'destination_4Kx8',
    destinationType: 'connected_wallet',
    destinationAddress: WALLET,
    chainId: CHAIN_ID,
    assetCode: 'USDC',
    tokenAddress: TOKEN,
    decimals: 6,
  },
  fees: {
    version: 1,
    pricingStatus: 'quoted',
    platformFeeBps: 100,
    partnerFeeBps: 50,
    platformFeeAmountAtomic: '250000',
    partnerFeeAmountAtomic: '125000',
    merchantNetAmountAtomic: '24625000',
  },
  funding: escrowFunding,
  externalReference: 'order-4711',
  description: 'Two loaves',
  metadata: { orderId: '4711' },
  expiresAt: LATER,
  acceptedAt: null,
  succeededAt: null,
  cancelledAt: null,
  failure: null,
  refundSummary: { status: 'none', count: 0, requestedAmountAtomic: '0', confirmedAmountAtomic: '0' },
  incidentRecoverySummary: {
    count: 0,
    pendingCount: 0,
    confirmedCount: 0,
    failedCount: 0,
    requiresInterventionCount: 0,
    requestedAmountAtomic: '0',
    confirmedAmountAtomic: '0',
  },
  createdAt: AT,
  updatedAt: AT,
  // Nothing on chain yet; once paid, one entry per incoming transfer and per settlement leg.
  finality: { transfers: [], settlement: [] },
};

/**
 * A Payment whose payer's transfer was just handed over (a client's confirm): not read on chain yet, so
 * no block and no confirmation; the scanner's next read fills them in.
 */
export const paidPaymentExample = {
  ...paymentExample,
  finality: {
    transfers: [
      {
        chainId: CHAIN_ID,
        transactionHash: TX_HASH,
        blockNumber: null,
        confirmations: 0,
        confirmationsRequired: 2,
        finalized: false,
        estimatedFinalAt: null,
      },
    ],
    settlement: [],
  },
};

export const nextActionExample = { id: 'action_5Tz1', type: 'transaction', expiresAt: LATER, depositInstructions };

export const checkoutExample = {
  paymentUrl: `https://pay.example.com/checkout/${PAYMENT_ID}`,
  clientSecret: `${PAYMENT_ID}_secret_0123456789abcdef0123456789abcdef01234567`,
  expiresAt: LATER,
  returnUrl: 'https://shop.example.com/orders/4711',
};

const WALLET_ID = 'wallet_6Hq2Rt';
const SETTLEMENT_PROFILE_ID = 'settle_1Ab2';

const freshAccount = {
  account: {
    id: ACCOUNT_ID,
    externalUserId: 'user-1842',
    subjectType: 'individual',
    status: 'active',
    paymentAcceptance: { publicReceiveEnabled: false, version: 1 },
    metadata: {},
    createdAt: AT,
    updatedAt: AT,
  },
  displayProfile: { displayName: null, logoUrl: null, version: 0 },
  paymentHandle: {
    id: 'handle_5Jt3Pq',
    accountId: ACCOUNT_ID,
    namespace: APP_ID,
    handle: 'cornerbakery1',
    status: 'active',
    createdAt: AT,
    updatedAt: AT,
  },
  connectedWallets: [] as unknown[],
  settlementProfile: null as unknown,
};

const wallet = (settlementProfileId: string | null) => ({
  id: WALLET_ID,
  accountId: ACCOUNT_ID,
  kind: 'evm',
  chainId: CHAIN_ID,
  address: WALLET,
  label: 'Treasury',
  status: 'active',
  ownershipVerificationStatus: 'unverified',
  ownershipVerificationMethod: 'eip712_signature',
  settlementProfileId,
  createdAt: AT,
  updatedAt: AT,
});

const settlementProfile = {
  id: SETTLEMENT_PROFILE_ID,
  accountId: ACCOUNT_ID,
  version: 1,
  connectedWalletId: WALLET_ID,
  settlementDestinationId: 'destination_4Kx8',
  status: 'active',
  destinationType: 'connected_wallet',
  chainId: CHAIN_ID,
  destinationAddress: WALLET,
  assetSymbol: 'USDC',
  tokenAddress: TOKEN,
  // What Payments created from now on capture.
  snapshot: {
    chainId: CHAIN_ID,
    version: 1,
    decimals: 6,
    capturedAt: AT,
    assetSymbol: 'USDC',
    tokenAddress: TOKEN,
    destinationType: 'connected_wallet',
    connectedWalletId: WALLET_ID,
    destinationAddress: WALLET,
    settlementDestinationId: 'destination_4Kx8',
  },
};

/** The account bundle at each step of setting an account up: created, named, a wallet, a settlement profile, accepting public Payments. */
const namedAccount = { ...freshAccount, displayProfile: { displayName: 'Corner Bakery', logoUrl: null, version: 1 } };
const withWallet = { ...namedAccount, connectedWallets: [wallet(null)] };
const settled = { ...namedAccount, connectedWallets: [wallet(SETTLEMENT_PROFILE_ID)], settlementProfile };
const accepting = { ...settled, account: { ...settled.account, paymentAcceptance: { publicReceiveEnabled: true, version: 2 } } };
export const accountBundleExamples = { created: freshAccount, named: namedAccount, withWallet, settled, accepting };

export const fundReturnExample = {
  id: 'refund_2Wq7',
  object: 'refund',
  paymentId: PAYMENT_ID,
  incidentId: null,
  status: 'pending',
  statusVersion: 1,
  // Refunds and recoveries answer their addresses in lowercase.
  amount: { amount: '5', amountAtomic: '5000000', assetCode: 'USDC', decimals: 6, chainId: CHAIN_ID, tokenAddress: TOKEN.toLowerCase() },
  destinationAddress: WALLET.toLowerCase(),
  reason: 'Customer returned one loaf',
  transactionHash: null,
  failureReason: null,
  createdAt: AT,
  broadcastAt: null,
  confirmedAt: null,
  finality: { transfers: [], settlement: [] },
};

export const depositAddressExample = {
  id: 'deposit_addr_8Jd3',
  accountId: ACCOUNT_ID,
  address: ESCROW,
  chainId: CHAIN_ID,
  networkCode: 'anvil',
  assetSymbol: 'USDC',
  tokenAddress: TOKEN,
  decimals: 6,
  status: 'active',
  createdAt: AT,
  updatedAt: AT,
};

const policyExample = {
  id: 'vault_policy_3Nf8',
  vaultId: 'vault_5Gh2',
  version: 1,
  status: 'pending_approval',
  spendLimit: { amountAtomic: '500000000', currency: 'USD', decimals: 6, period: 'fixed_30_day' },
  allowedTokens: [{ symbol: 'USDC', chainId: CHAIN_ID, decimals: 6, tokenAddress: TOKEN }],
  managedApproval: { method: 'email_otp', email: 'payer@example.com' },
  activatedAt: null,
  createdAt: AT,
  updatedAt: AT,
};

export const vaultExample = {
  id: 'vault_5Gh2',
  accountId: PAYER_ACCOUNT_ID,
  status: 'active',
  chainId: CHAIN_ID,
  address: '0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0',
  ownership: 'stableyard',
  policy: null,
  pendingPolicy: policyExample,
  spendPeriod: null,
  balances: [
    {
      symbol: 'USDC',
      chainId: CHAIN_ID,
      tokenAddress: TOKEN,
      decimals: 6,
      balanceAtomic: '100000000',
      reservedAtomic: '0',
      availableAtomic: '100000000',
    },
  ],
  createdAt: AT,
  updatedAt: AT,
};

/** The spend period a policy opens when it becomes active: 30 days from activation. */
export const spendPeriodExample = { startsAt: AT, endsAt: '2026-10-09T12:00:00.000Z', authorizedAtomic: '0', remainingAtomic: '500000000' };

/** A dry run of paying a 25 USDC Payment from the vault: every rule passes. */
export const policyEvaluationExample = {
  vaultId: 'vault_5Gh2',
  accountId: PAYER_ACCOUNT_ID,
  policyId: 'vault_policy_3Nf8',
  spend: {
    amount: '25',
    amountAtomic: '25000000',
    assetCode: 'USDC',
    decimals: 6,
    chainId: CHAIN_ID,
    tokenAddress: TOKEN,
    destination: { type: 'upa', accountId: ACCOUNT_ID },
    paymentId: 'payment_2Vt7Hc4Mz8',
  },
  decision: 'allow',
  reasonCode: null,
  rules: [
    { rule: 'payment', verdict: 'pass', reasonCode: null, detail: 'The Payment is open to vault funding' },
    { rule: 'destination', verdict: 'pass', reasonCode: null, detail: "The recipient is not the vault's own account" },
    { rule: 'policy_active', verdict: 'pass', reasonCode: null, detail: 'The policy is active' },
    { rule: 'allowed_tokens', verdict: 'pass', reasonCode: null, detail: 'The policy allows this token' },
    {
      rule: 'spend_limit',
      verdict: 'pass',
      reasonCode: null,
      detail: '0 authorized in this period + 25000000 is within the limit of 500000000 (atomic units)',
    },
    { rule: 'available_balance', verdict: 'pass', reasonCode: null, detail: '100000000 available covers 25000000 (atomic units)' },
    {
      rule: 'managed_approval',
      verdict: 'not_applicable',
      reasonCode: null,
      detail: "The policy's email approval is asked when the policy changes, not for each spend",
    },
  ],
  spendLimit: {
    amountAtomic: '500000000',
    currency: 'USD',
    decimals: 6,
    period: 'fixed_30_day',
    startsAt: AT,
    endsAt: '2026-10-09T12:00:00.000Z',
    authorizedAtomic: '0',
    remainingAtomic: '500000000',
  },
  approvalRequired: false,
  evaluatedAt: AT,
};

export const bankAccountExample = {
  id: 'bank_account_7Yt2Kq',
  accountId: ACCOUNT_ID,
  accountHolderName: 'Corner Bakery LLC',
  country: 'US',
  currency: 'USD',
  bankName: 'JPMorgan Chase Bank, N.A.',
  bankCode: 'CHASUS33',
  accountNumberLast4: '6789',
  rail: 'ach',
  status: 'pending_verification',
  verification: { version: 1, verifiedAt: null },
  disabledAt: null,
  createdAt: AT,
  updatedAt: AT,
};

const optionAmount = { amountAtomic: '25000000', assetSymbol: 'USDC', decimals: 6, chainId: CHAIN_ID };
const settledAmount = (atomic: string, decimal: string) => ({
  amountAtomic: atomic,
  amountDecimal: decimal,
  assetSymbol: 'USDC',
  decimals: 6,
  chainId: CHAIN_ID,
  tokenAddress: TOKEN,
});

export const vaultOptionExample = {
  id: 'pay_option_4Rk9',
  providerCode: 'vault',
  paymentMethodType: 'vault',
  paymentMethodId: 'vault_5Gh2',
  type: 'vault_transfer',
  displayName: 'Pay USDC from your vault',
  status: 'processing',
  selectionStatus: 'selected',
  requiredAmountAtomic: '25000000',
  paidAmountAtomic: '0',
  remainingAmountAtomic: '25000000',
  isTerminal: false,
  confirmationMode: 'provider_webhook',
  transactionSubmissions: [],
  sourceAmount: optionAmount,
  // The recipient's share: the Payment less the platform and partner fees.
  destinationAmount: { ...optionAmount, amountAtomic: '24625000' },
  payerAmount: settledAmount('25000000', '25'),
  recipientAmount: settledAmount('24625000', '24.625'),
  providerFee: settledAmount('0', '0'),
  execution: null,
  expiresAt: LATER,
  refreshable: false,
  feeAmountAtomic: '0',
  actionExpiresAt: null,
  quoteExpiresAt: LATER,
  orderExpiresAt: LATER,
  receipts: [],
};

export const fundingOperationExample = {
  id: 'pay_funding_8Vb1',
  status: 'authorized',
  statusVersion: 1,
  commercialFeeMode: 'parent_payment',
  transactionHash: null,
  authorizedAt: AT,
  broadcastAt: null,
  confirmedAt: null,
  expiresAt: LATER,
};

const publicDestination = {
  chainId: CHAIN_ID,
  networkCode: 'anvil',
  chainName: 'Anvil sandbox',
  chainFamily: 'evm',
  assetSymbol: 'USDC',
  tokenAddress: TOKEN,
  decimals: 6,
  assetKind: 'token',
  logoUrl: null,
  minimumAmount: '1',
  maximumAmount: '1000',
  available: true,
  disabledReason: null,
};

export const publicPaymentConfigurationExample = {
  enabled: true,
  authentication: 'none',
  purpose: 'wallet_payment',
  methods: ['direct'],
  destinations: [publicDestination],
  allowedFiatCurrencies: ['USD'],
  paymentTtlSeconds: 900,
  configureEndpoint: `/v2/public/apps/${APP_ID}/payments/configuration`,
  createEndpoint: `/v2/public/apps/${APP_ID}/payments`,
  appId: APP_ID,
  recipientReference: 'payment_handle',
  idempotencyKey: { required: true, minLength: 16, maxLength: 256 },
  rateLimit: { scope: 'client_ip', points: 30, windowSeconds: 60 },
};

export const publicPaymentExample = {
  payment: {
    id: PAYMENT_ID,
    apiVersion: '2026-09-09',
    intent: 'receive',
    status: 'requires_payment_method',
    statusVersion: 1,
    paymentAmount: amount('25', '25000000'),
    network: { chainId: CHAIN_ID, networkCode: 'anvil' },
    fiatCurrency: 'USD',
    recipientDisplay: { displayName: 'Corner Bakery', logoUrl: null },
    description: 'Two loaves',
    expiresAt: LATER,
    createdAt: AT,
  },
  checkout: { paymentUrl: `https://pay.example.com/checkout/${PAYMENT_ID}`, clientSecret: null, expiresAt: LATER, returnUrl: null },
  nextAction: nextActionExample,
};

export const EXAMPLE = { AT, LATER, TOKEN_EXPIRY, TOKEN, CHAIN_ID, WALLET, TX_HASH, PAYER_ACCOUNT_ID };
