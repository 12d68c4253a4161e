import type { AppCredential } from '../../../src/domain/apps/apps';
import type { RouteKey } from './routes';
import { clientSecretFor } from '../../../src/domain/payments/payment-view';
import { TEST_SERVICE_SECRET } from '../../support/harness';

/** The resources a fuzz run works on: one merchant app and what it owns, and a second app. */
export interface FuzzFixture {
  cred: AppCredential;
  /** Another tenant: its credential on this app's resources must be a clean 404. */
  other: AppCredential;
  adminToken: string;
  accountId: string;
  externalUserId: string;
  walletId: string;
  walletAddress: string;
  depositAddressId: string;
  endpointId: string;
  /** A genuine cursor of GET /v2/payments, to replay on lists it doesn't belong to. */
  paymentsCursor: string;
  /** An open Payment made for the request that is about to run (routes with a :paymentId). */
  paymentId: string;
  /** A client API token of a payer account of the app (not the merchant's: a recipient never pays its own Payment). */
  clientToken: string;
  /** Another account of the app, whose tokens the revoke route revokes (not clientToken's). */
  spareAccountId: string;
  /** The merchant account's payment handle (it accepts public Payments). */
  handle: string;
}

/** A valid request to one route; the mutations in requests.ts turn it into a buggy client's. */
export interface RouteModel {
  auth: 'partner' | 'admin' | 'client' | 'none';
  /** Client API: send the Payment's X-Svc-Payment-Secret (its checkout.clientSecret). */
  paymentSecret?: boolean;
  params?: (f: FuzzFixture) => Record<string, string>;
  query?: (f: FuzzFixture) => Record<string, string>;
  /** A valid JSON body; called once per request, so unique fields stay unique. */
  body?: (f: FuzzFixture) => Record<string, unknown>;
  idempotencyKey?: 'required' | 'optional';
  /** The resource to read (and for a Payment, cancel) after the request. */
  touches?: 'payment' | 'account';
}

let unique = 0;
const next = (prefix: string) => `${prefix}-${process.pid}-${(unique += 1)}`;

const account = (f: FuzzFixture) => ({ accountId: f.accountId });
const payment = (f: FuzzFixture) => ({ paymentId: f.paymentId });
const app = (f: FuzzFixture) => ({ appId: f.cred.appId });
const endpoint = (f: FuzzFixture) => ({ appId: f.cred.appId, endpointId: f.endpointId });
// No delivery, transaction, deposit or alert exists for the fuzz app: well-formed ids that find nothing.
const delivery = (f: FuzzFixture) => ({ appId: f.cred.appId, deliveryId: 'dlv_0fuzz0' });

/**
 * One model per route of the app. The test fails on a route without a model (and on a model
 * without a route), so a new endpoint can't escape the fuzzing.
 */
export const ROUTE_MODELS: Record<RouteKey, RouteModel> = {
  'GET /healthz': { auth: 'none' },
  'GET /checkout/:paymentId': { auth: 'none', params: payment, touches: 'payment' },
  'GET /checkout/:paymentId/status': { auth: 'none', params: payment, touches: 'payment' },
  'GET /checkout/:paymentId/qr.svg': { auth: 'none', params: payment, touches: 'payment' },
  'GET /checkout/assets/:file': { auth: 'none', params: () => ({ file: 'checkout.js' }) },
  // The partner's front end hands the payer's token and the payment secret to the page (form or JSON).
  'POST /checkout/:paymentId/session': {
    auth: 'none',
    params: payment,
    touches: 'payment',
    body: (f) => ({ clientToken: f.clientToken, clientSecret: clientSecretFor(TEST_SERVICE_SECRET, f.paymentId) }),
  },
  // Without the session cookie (a buggy client has none): 401.
  'GET /checkout/:paymentId/vault': { auth: 'none', params: payment, touches: 'payment' },
  'POST /checkout/:paymentId/vault/authorize': { auth: 'none', params: payment, touches: 'payment' },
  'GET /v2/openapi/partners.json': { auth: 'none' },
  'GET /docs': { auth: 'none' },
  // The provider's callbacks: a buggy caller has no signature, so every answer is a 4xx (401, 400, 404).
  'POST /v2/providers/:providerCode/callbacks': {
    auth: 'none',
    params: () => ({ providerCode: 'sandbox' }),
    body: () => ({
      id: next('evt'),
      type: 'bank_account.updated',
      createdAt: new Date().toISOString(),
      data: {
        bankAccountId: next('ba'),
        providerAccountId: 'ba_sbx_fuzz',
        status: 'verified',
        failureReason: null,
        accountNumberLast4: '6789',
      },
    }),
  },

  'GET /v2/partners/config': { auth: 'partner' },
  'GET /v2/idempotency-keys/:key': { auth: 'partner', params: () => ({ key: 'fuzz-key-1' }) },
  'POST /v2/accounts': {
    auth: 'partner',
    idempotencyKey: 'optional',
    body: () => ({ externalUserId: next('fuzz-user'), subjectType: 'business', metadata: { order: 'A-1', n: 1, nested: { ok: true } } }),
  },
  'GET /v2/accounts/external/:externalUserId': {
    auth: 'partner',
    params: (f) => ({ externalUserId: f.externalUserId }),
    touches: 'account',
  },
  'GET /v2/accounts/:accountId': { auth: 'partner', params: account, touches: 'account' },
  'GET /v2/accounts/:accountId/capabilities': { auth: 'partner', params: account, touches: 'account' },
  'PUT /v2/accounts/:accountId/display-profile': {
    auth: 'partner',
    params: account,
    touches: 'account',
    body: () => ({
      displayName: 'Fuzz Shop',
      logoUrl: 'https://example.com/logo.png',
      expectedVersion: 1,
      reason: 'rebranding for the fuzz run',
    }),
  },
  'PUT /v2/accounts/:accountId/payment-acceptance': {
    auth: 'partner',
    params: account,
    touches: 'account',
    body: () => ({ publicReceiveEnabled: true, expectedVersion: 2 }),
  },
  'POST /v2/accounts/:accountId/connected-wallets': {
    auth: 'partner',
    idempotencyKey: 'optional',
    params: account,
    touches: 'account',
    body: (f) => ({ kind: 'evm', chainId: 31337, address: f.walletAddress, label: 'main' }),
  },
  'PUT /v2/accounts/:accountId/settlement-profile': {
    auth: 'partner',
    params: account,
    touches: 'account',
    body: (f) => ({ connectedWalletId: f.walletId, assetSymbol: 'USDC' }),
  },
  'GET /v2/accounts/:accountId/transactions': {
    auth: 'partner',
    params: account,
    touches: 'account',
    query: () => ({ limit: '10', status: 'posted' }),
  },
  'GET /v2/accounts/:accountId/transactions/:transactionId': {
    auth: 'partner',
    params: (f) => ({ accountId: f.accountId, transactionId: 'txn_0fuzz0' }),
    touches: 'account',
  },
  'GET /v2/accounts/:accountId/balances': { auth: 'partner', params: account, touches: 'account' },
  'POST /v2/accounts/:accountId/deposit-addresses': {
    auth: 'partner',
    idempotencyKey: 'optional',
    params: account,
    touches: 'account',
    body: () => ({ chainId: 31337, assetSymbol: 'USDC', newAddress: false }),
  },
  'GET /v2/accounts/:accountId/deposit-addresses': {
    auth: 'partner',
    params: account,
    touches: 'account',
    query: () => ({ chainId: '31337', assetSymbol: 'USDC', limit: '5' }),
  },
  'GET /v2/accounts/:accountId/deposit-addresses/:depositAddressId': {
    auth: 'partner',
    params: (f) => ({ accountId: f.accountId, depositAddressId: f.depositAddressId }),
    touches: 'account',
  },
  'GET /v2/accounts/:accountId/deposits': {
    auth: 'partner',
    params: account,
    touches: 'account',
    query: () => ({ status: 'settled', limit: '5' }),
  },
  'GET /v2/accounts/:accountId/deposits/:depositId': {
    auth: 'partner',
    params: (f) => ({ accountId: f.accountId, depositId: 'deposit_0fuzz0' }),
    touches: 'account',
  },
  'POST /v2/accounts/:accountId/vault': {
    auth: 'partner',
    idempotencyKey: 'optional',
    params: account,
    touches: 'account',
    body: () => ({ chainId: 31337 }),
  },
  'GET /v2/accounts/:accountId/vault': { auth: 'partner', params: account, touches: 'account' },
  'PUT /v2/accounts/:accountId/vault/policy': {
    auth: 'partner',
    idempotencyKey: 'optional',
    params: account,
    touches: 'account',
    body: () => ({
      spendLimit: { amountAtomic: '5000000' },
      period: 'fixed_30_day',
      allowedTokens: [{ chainId: 31337, tokenAddress: '0xf1108D9fDF3d265B59Bf6Ce7Bf240f99c071ffF5' }],
      managedApproval: { method: 'email_otp', email: 'fuzz@example.com' },
    }),
  },
  'POST /v2/accounts/:accountId/vault/policy/approval': { auth: 'partner', params: account, touches: 'account', body: () => ({}) },
  'POST /v2/accounts/:accountId/vault/policy/approval/verify': {
    auth: 'partner',
    params: account,
    touches: 'account',
    body: () => ({ code: '123456' }),
  },
  'GET /v2/accounts/:accountId/vault/audit-events': { auth: 'partner', params: account, touches: 'account', query: () => ({ limit: '5' }) },
  // A well-formed id of no vault: a dry run writes nothing, so the fuzz checks its 400s and the 404.
  'POST /v2/vaults/:vaultId/policy/evaluate': {
    auth: 'partner',
    params: () => ({ vaultId: 'vault_0fuzz0' }),
    body: (f) => ({ amount: '5', assetCode: 'USDC', chainId: 31337, destination: { type: 'upa', accountId: f.accountId } }),
  },
  'GET /v2/accounts/:accountId/bank-account-requirements': { auth: 'partner', params: account, touches: 'account' },
  'POST /v2/accounts/:accountId/bank-accounts': {
    auth: 'partner',
    idempotencyKey: 'required',
    params: account,
    touches: 'account',
    body: () => ({
      country: 'US',
      currency: 'USD',
      accountHolderName: 'Fuzz Holder',
      bankName: 'Citibank, N.A.',
      bankCode: 'CITIUS33',
      routingNumber: '021000089',
      // Unique per request: the same real account twice is a conflict, not what this model tests.
      accountNumber: String(10_000_000 + (unique += 1)),
      accountType: 'checking',
    }),
  },
  'GET /v2/accounts/:accountId/bank-accounts': {
    auth: 'partner',
    params: account,
    touches: 'account',
    query: () => ({ limit: '5', status: 'pending_verification' }),
  },
  'GET /v2/accounts/:accountId/bank-accounts/:bankAccountId': {
    auth: 'partner',
    params: (f) => ({ accountId: f.accountId, bankAccountId: 'bank_account_0fuzz0' }),
    touches: 'account',
  },
  'POST /v2/accounts/:accountId/bank-accounts/:bankAccountId/disable': {
    auth: 'partner',
    idempotencyKey: 'optional',
    params: (f) => ({ accountId: f.accountId, bankAccountId: 'bank_account_0fuzz0' }),
    touches: 'account',
    body: () => ({}),
  },
  'GET /v2/payments/external-bank/banks': { auth: 'partner', query: () => ({ country: 'VN' }) },
  'POST /v2/payments': {
    auth: 'partner',
    idempotencyKey: 'required',
    body: (f) => ({
      intent: 'receive',
      amount: '12.50',
      assetCode: 'USDC',
      chainId: 31337,
      destination: { type: 'upa', accountId: f.accountId },
      expiresInSeconds: 600,
      externalReference: next('order'),
      description: 'Two coffees',
      metadata: { cart: ['espresso', 'latte'] },
      returnUrl: 'https://shop.example/return',
    }),
  },
  'GET /v2/events': { auth: 'partner', query: () => ({ limit: '5', name: 'account.created', createdFrom: '2020-01-01T00:00:00Z' }) },
  'GET /v2/events/:eventId': { auth: 'partner', params: () => ({ eventId: 'evt_0fuzz0' }) },
  'GET /v2/payments': {
    auth: 'partner',
    query: () => ({ limit: '5', status: 'requires_payment_method', createdFrom: '2020-01-01T00:00:00Z' }),
  },
  'GET /v2/payments/:paymentId': { auth: 'partner', params: payment, touches: 'payment' },
  'POST /v2/payments/:paymentId/cancel': {
    auth: 'partner',
    idempotencyKey: 'optional',
    params: payment,
    touches: 'payment',
    body: () => ({ reasonCode: 'customer_request', reason: 'changed their mind' }),
  },

  // A second of the fixture Payment's sandbox clock per valid request: far from its expiry.
  'POST /v2/sandbox/payments/:paymentId/advance-clock': {
    auth: 'partner',
    idempotencyKey: 'required',
    params: payment,
    touches: 'payment',
    body: () => ({ seconds: 1 }),
  },
  'POST /v2/sandbox/accounts/:accountId/vault/policy/approval/advance-clock': {
    auth: 'partner',
    idempotencyKey: 'required',
    params: account,
    touches: 'account',
    body: () => ({ seconds: 60 }),
  },

  // An open Payment: a refund is refused (409), an unknown incident is not found (404).
  'POST /v2/payments/:paymentId/refunds': {
    auth: 'partner',
    idempotencyKey: 'required',
    params: payment,
    touches: 'payment',
    body: () => ({ amount: '1.5', reason: 'fuzz' }),
  },
  'GET /v2/payments/:paymentId/refunds': { auth: 'partner', params: payment, touches: 'payment' },
  'POST /v2/payments/:paymentId/incident-recoveries': {
    auth: 'partner',
    idempotencyKey: 'required',
    params: payment,
    touches: 'payment',
    body: () => ({ incidentId: 'incident_0fuzz0' }),
  },
  'GET /v2/payments/:paymentId/incident-recoveries': { auth: 'partner', params: payment, touches: 'payment' },
  'GET /v2/payments/:paymentId/incidents': { auth: 'partner', params: payment, touches: 'payment' },

  // Public Payment creation: no credential; the merchant's account accepts public Payments.
  'GET /v2/public/apps/:appId/payments/configuration': { auth: 'none', params: app },
  'POST /v2/public/apps/:appId/payments': {
    auth: 'none',
    idempotencyKey: 'required',
    params: app,
    body: (f) => ({
      recipient: { handle: f.handle },
      amount: '12.50',
      chainId: 31337,
      assetSymbol: 'USDC',
      fiatCurrency: 'USD',
      description: 'Tip jar',
    }),
  },

  'POST /v2/client/auth/exchange': { auth: 'partner', body: (f) => ({ accountId: f.accountId }) },
  'POST /v2/client/auth/revoke': { auth: 'partner', body: (f) => ({ accountId: f.spareAccountId }) },
  'GET /v2/client/me/payments/:paymentId': { auth: 'client', paymentSecret: true, params: payment, touches: 'payment' },
  'POST /v2/client/me/payments/:paymentId/confirm': {
    auth: 'client',
    idempotencyKey: 'optional',
    params: payment,
    touches: 'payment',
    body: () => ({
      actionId: 'action_0fuzz0',
      proof: { type: 'transaction', transactionHash: `0x${'ab'.repeat(32)}` },
      metadata: { order: 'fuzz' },
    }),
  },
  'POST /v2/client/me/payments/:paymentId/options/:optionId/authorize': {
    auth: 'client',
    paymentSecret: true,
    idempotencyKey: 'required',
    params: (f) => ({ paymentId: f.paymentId, optionId: 'pay_option_0fuzz0' }),
    touches: 'payment',
    body: () => ({
      actionId: 'action_0fuzz0',
      proof: { type: 'managed_authorization', authorization: 'approved' },
      metadata: { order: 'fuzz' },
    }),
  },

  // An open Payment is not held (409), and no deposit or return has these ids (404): every refusal's envelope and no write.
  'POST /admin/v1/payments/:id/resolve': {
    auth: 'admin',
    params: (f) => ({ id: f.paymentId }),
    touches: 'payment',
    body: () => ({ action: 'fail', reason: 'fuzz' }),
  },
  'POST /admin/v1/deposits/:id/resolve': {
    auth: 'admin',
    params: () => ({ id: 'deposit_0fuzz0' }),
    body: () => ({ action: 'retry' }),
  },
  'POST /admin/v1/fund-returns/:id/resolve': {
    auth: 'admin',
    params: () => ({ id: 'refund_0fuzz0' }),
    body: () => ({ action: 'mark-settled', txHash: `0x${'cd'.repeat(32)}`, reason: 'fuzz' }),
  },
  'POST /admin/v1/payments/:paymentId/incident-recoveries': {
    auth: 'admin',
    params: payment,
    body: () => ({ incidentId: 'incident_0fuzz0', reason: 'fuzz' }),
  },
  // An app no fixture uses: a rotation (overlap 0) or a revocation of the fuzz's own app would refuse its later requests.
  'POST /admin/v1/apps/:appId/secret-rotations': {
    auth: 'admin',
    params: () => ({ appId: 'app_0fuzz0' }),
    body: () => ({ reason: 'fuzz', overlapSeconds: 60 }),
  },
  'POST /admin/v1/apps/:appId/revocation': {
    auth: 'admin',
    params: () => ({ appId: 'app_0fuzz0' }),
    body: () => ({ reason: 'fuzz' }),
  },
  'POST /admin/v1/apps/:appId/webhook-endpoints': {
    auth: 'admin',
    params: app,
    body: () => ({ url: 'http://127.0.0.1:9/fuzz', description: 'fuzz', events: ['deposit.settled'] }),
  },
  'GET /admin/v1/apps/:appId/webhook-endpoints': { auth: 'admin', params: app },
  'GET /admin/v1/apps/:appId/webhook-endpoints/:endpointId': { auth: 'admin', params: endpoint },
  'PATCH /admin/v1/apps/:appId/webhook-endpoints/:endpointId': {
    auth: 'admin',
    params: endpoint,
    body: () => ({ description: 'still fuzz', events: ['deposit.settled'] }),
  },
  'POST /admin/v1/apps/:appId/webhook-endpoints/:endpointId/disable': { auth: 'admin', params: endpoint },
  'POST /admin/v1/apps/:appId/webhook-endpoints/:endpointId/enable': { auth: 'admin', params: endpoint },
  'POST /admin/v1/apps/:appId/webhook-endpoints/:endpointId/archive': { auth: 'admin', params: endpoint },
  'POST /admin/v1/apps/:appId/webhook-endpoints/:endpointId/rotate-secret': { auth: 'admin', params: endpoint },
  'GET /admin/v1/apps/:appId/webhook-deliveries': {
    auth: 'admin',
    params: app,
    query: (f) => ({ endpointId: f.endpointId, status: 'pending', limit: '5' }),
  },
  'GET /admin/v1/apps/:appId/webhook-deliveries/:deliveryId': { auth: 'admin', params: delivery },
  'GET /admin/v1/apps/:appId/webhook-deliveries/:deliveryId/attempts': { auth: 'admin', params: delivery },
  'POST /admin/v1/apps/:appId/webhook-deliveries/:deliveryId/redeliver': { auth: 'admin', params: delivery },
  'POST /admin/v1/apps/:appId/webhook-endpoints/:endpointId/recover': {
    auth: 'admin',
    params: endpoint,
    body: () => ({ since: new Date(Date.now() - 3_600_000).toISOString() }),
  },
  // An unknown email on the fuzz's own app: an invitation (201), or a refusal that writes nothing.
  'POST /admin/v1/apps/:appId/dashboard-users': {
    auth: 'admin',
    params: app,
    body: () => ({ email: 'fuzz@partner.example', role: 'viewer' }),
  },
  'GET /admin/v1/apps/:appId/dashboard-users': { auth: 'admin', params: app },
  'POST /admin/v1/apps/:appId/dashboard-users/:userId/removal': {
    auth: 'admin',
    params: (f) => ({ appId: f.cred.appId, userId: 'puser_0fuzz0' }),
    body: () => ({}),
  },
  // Two-person approvals: nothing pending under these ids (404), every refusal's envelope and no write.
  'GET /admin/v1/approvals': { auth: 'admin', query: () => ({ status: 'pending' }) },
  'POST /admin/v1/approvals/:approvalId/approve': { auth: 'admin', params: () => ({ approvalId: 'approval_0fuzz0' }), body: () => ({}) },
  'POST /admin/v1/approvals/:approvalId/reject': {
    auth: 'admin',
    params: () => ({ approvalId: 'approval_0fuzz0' }),
    body: () => ({ reason: 'fuzz' }),
  },
  'GET /admin/v1/alerts': { auth: 'admin', query: () => ({ open: 'true', kind: 'ledger_difference', limit: '5' }) },
  'GET /admin/v1/alerts/:alertId': { auth: 'admin', params: () => ({ alertId: 'alert_0fuzz0' }) },
  // Prometheus metrics (text, not JSON): a 200 answers the exposition, a refusal the envelope.
  'GET /metrics': { auth: 'admin' },
};
