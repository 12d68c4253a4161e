/**
 * Example values shared by the document's operations. A test validates every example against the
 * schema it illustrates, so these can't drift from the shapes.
 */
const AT = '2026-09-09T12:00:00.000Z';
const LATER = '2026-09-09T12:10:00.000Z';
const TOKEN = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const CHAIN_ID = 31337;
export const ACCOUNT_ID = 'acct_7Q2mV9xKp3';
const PAYER_ACCOUNT_ID = 'acct_3Lr8Tq1Nw6';
export const PAYMENT_ID = 'payment_9bF2kLm4Qx';
const ESCROW = '0x8d2B5a1e6C3f4A9b7E0d1C2b3A4f5E6d7C8b9A0f';
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

const depositInstructions = { address: ESCROW, chainId: CHAIN_ID, tokenAddress: TOKEN, assetCode: 'USDC', decimals: 6, amount: '25.00', amountAtomic: '25000000' };

export const paymentExample = {
  id: PAYMENT_ID,
  apiVersion: '2026-09-09',
  intent: 'receive',
  amountMode: 'collect_exact',
  status: 'requires_payment_method',
  offrampStatus: null,
  stage: null,
  operationalState: 'normal',
  operationalReasonCode: null,
  operationalUpdatedAt: null,
  statusVersion: 1,
  paymentAmount: amount('25.00', '25000000'),
  sourceAmount: amount('25.00', '25000000'),
  participants: [{ role: 'recipient', accountId: ACCOUNT_ID }],
  recipientDisplay: { displayName: 'Corner Bakery', logoUrl: null },
  destination: { type: 'upa', accountId: ACCOUNT_ID },
  settlement: {
    type: 'settlement_destination',
    settlementDestinationId: 'settle_dest_4Kx8',
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
    platformFeeBps: 50,
    partnerFeeBps: 100,
    platformFeeAmountAtomic: '125000',
    partnerFeeAmountAtomic: '250000',
    merchantNetAmountAtomic: '24625000',
  },
  funding: null,
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
};

export const nextActionExample = { id: 'action_5Tz1', type: 'transaction', expiresAt: LATER, depositInstructions };

export const checkoutExample = {
  paymentUrl: `https://pay.example.com/checkout/${PAYMENT_ID}`,
  clientSecret: `${PAYMENT_ID}_secret_0123456789abcdef0123456789abcdef01234567`,
  expiresAt: LATER,
  returnUrl: 'https://shop.example.com/orders/4711',
};

export const accountBundleExample = {
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
  displayProfile: { displayName: 'Corner Bakery', logoUrl: null, version: 1 },
  paymentHandle: null,
  connectedWallets: [
    {
      id: 'wallet_6Hq2Rt',
      accountId: ACCOUNT_ID,
      kind: 'evm',
      chainId: CHAIN_ID,
      address: WALLET,
      label: 'Treasury',
      status: 'active',
      ownershipVerificationStatus: 'unverified',
      ownershipVerificationMethod: 'none',
      settlementProfileId: null,
      createdAt: AT,
      updatedAt: AT,
    },
  ],
  settlementProfile: null,
};

export const fundReturnExample = {
  id: 'refund_2Wq7',
  object: 'refund',
  paymentId: PAYMENT_ID,
  incidentId: null,
  status: 'pending',
  statusVersion: 1,
  amount: { amount: '5.00', amountAtomic: '5000000', assetCode: 'USDC', decimals: 6, chainId: CHAIN_ID, tokenAddress: TOKEN },
  destinationAddress: WALLET,
  reason: 'Customer returned one loaf',
  transactionHash: null,
  failureReason: null,
  createdAt: AT,
  broadcastAt: null,
  confirmedAt: null,
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
  spendLimit: { amountAtomic: '500000000', currency: 'USDC', decimals: 6, period: 'fixed_30_day' },
  allowedTokens: [{ symbol: 'USDC', chainId: CHAIN_ID, tokenAddress: TOKEN, decimals: 6 }],
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
  address: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0',
  ownership: 'stableyard',
  policy: null,
  pendingPolicy: policyExample,
  spendPeriod: null,
  balances: [{ symbol: 'USDC', chainId: CHAIN_ID, tokenAddress: TOKEN, decimals: 6, balanceAtomic: '100000000', reservedAtomic: '0', availableAtomic: '100000000' }],
  createdAt: AT,
  updatedAt: AT,
};

export const bankAccountExample = {
  id: 'bank_account_7Yt2Kq',
  accountId: ACCOUNT_ID,
  accountHolderName: 'Corner Bakery LLC',
  country: 'US',
  currency: 'USD',
  bankName: 'Example Bank',
  bankCode: 'EXAMPLEBANK',
  accountNumberLast4: '6789',
  rail: 'ach',
  status: 'pending_verification',
  verification: { version: 1, verifiedAt: null },
  disabledAt: null,
  createdAt: AT,
  updatedAt: AT,
};

const optionAmount = { amountAtomic: '25000000', assetSymbol: 'USDC', decimals: 6, chainId: CHAIN_ID };
const settledAmount = (atomic: string, decimal: string) => ({ amountAtomic: atomic, amountDecimal: decimal, assetSymbol: 'USDC', decimals: 6, chainId: CHAIN_ID, tokenAddress: TOKEN });

export const vaultOptionExample = {
  id: 'pay_option_4Rk9',
  providerCode: 'vault',
  paymentMethodType: 'vault',
  paymentMethodId: 'vault_5Gh2',
  type: 'vault',
  displayName: 'Pay from your vault',
  status: 'processing',
  selectionStatus: 'selected',
  requiredAmountAtomic: '25000000',
  paidAmountAtomic: '0',
  remainingAmountAtomic: '25000000',
  isTerminal: false,
  confirmationMode: 'managed_authorization',
  transactionSubmissions: [],
  sourceAmount: optionAmount,
  destinationAmount: optionAmount,
  payerAmount: settledAmount('25000000', '25.00'),
  recipientAmount: settledAmount('25000000', '25.00'),
  providerFee: settledAmount('0', '0'),
  execution: null,
  expiresAt: LATER,
  refreshable: false,
  feeAmountAtomic: '0',
  actionExpiresAt: null,
  quoteExpiresAt: null,
  orderExpiresAt: null,
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
  methods: ['crypto'],
  destinations: [publicDestination],
  allowedFiatCurrencies: ['USD'],
  paymentTtlSeconds: 900,
  configureEndpoint: '/v2/public/apps/app_4Rk9Wm2Zq7/payments/configuration',
  createEndpoint: '/v2/public/apps/app_4Rk9Wm2Zq7/payments',
  appId: 'app_4Rk9Wm2Zq7',
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
    paymentAmount: amount('25.00', '25000000'),
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

export const EXAMPLE = { AT, LATER, TOKEN, CHAIN_ID, WALLET, TX_HASH, PAYER_ACCOUNT_ID };
