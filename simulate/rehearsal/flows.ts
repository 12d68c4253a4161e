import { keccak256, stringToHex, type Address, type Hash } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { fundTestWallet } from '../../src/chain/sandbox';
import { FeeAboveCapError } from '../../src/chain/types';
import { formatAtomic } from '../../src/domain/amounts/amounts';
import { sandboxVaultCodes } from '../../src/domain/vaults/sandbox-mail';
import { Mutex } from '../chain-driver';
import { US_BANK_ACCOUNT } from '../partner';
import { until } from '../until';
import { readThroughRestart } from './harness-reads';
import type { RehearsalPartner } from './partner';
import type { RehearsalChain, RehearsalStack } from './stack';
import type { PaymentPlan, PlannedDeposit, PlannedPayment, ReleasedHold } from './verdicts';

/**
 * The partner load: receive Payments on the three chains, send Payments to an account and to a linked
 * bank account, deposits, refunds from the merchant's vault, receive Payments paid from a payer's
 * vault, and Payments planned to end otherwise: overpaid (the excess recovered by an operator through
 * the CLI), underpaid until they expire (recovered by the partner), never paid, cancelled. Each flow
 * goes through the public API (both processes) and, for the payer's transfers, the chains; each
 * Payment's plan is recorded, and checked at the end against what the service and the chains say.
 */

const USDC = (n: number) => BigInt(n) * 1_000_000n;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Payers on one chain: keys from the run's name, funded once; sends go one at a time (nonces). */
export class Payers {
  private readonly lock = new Mutex();
  private readonly keys: PrivateKeyAccount[];
  private n = 0;

  constructor(
    private readonly stack: RehearsalStack,
    readonly chain: RehearsalChain,
    count = 4,
  ) {
    this.keys = Array.from({ length: count }, (_, i) =>
      privateKeyToAccount(keccak256(stringToHex(`partner-payments/rehearsal/${chain.chainId}/payer/${i}`))),
    );
  }

  async fund(): Promise<void> {
    for (const k of this.keys)
      await fundTestWallet({
        rpcUrl: this.chain.rpcUrl,
        address: k.address,
        tokenAtomic: USDC(1_000_000),
        token: this.chain.token,
        nativeWei: 10n ** 20n,
      });
  }

  /**
   * A wallet's transfer. During a fee spike the node may refuse one priced from the block before
   * ("max fee per gas less than block base fee"): refused, it was never sent and its nonce is free,
   * so it is priced again, as a wallet would, until the node takes it.
   */
  send(to: string, amountAtomic: bigint): Promise<Hash> {
    return this.lock.run(() => {
      const from = this.keys[this.n++ % this.keys.length]!;
      const chain = this.stack.chain.chains.get(this.chain.chainId);
      return until(`a payer's transfer on chain ${this.chain.chainId} taken by the node`, 60_000, async () => {
        try {
          return await chain.sendTokenTransfer({ from, token: this.chain.token, to: to as Address, amountAtomic });
        } catch (err) {
          // The chain client reports the node's refusal under the base fee as FeeAboveCapError.
          if (err instanceof FeeAboveCapError) return undefined;
          if (err instanceof Error && /max fee per gas less than block base fee/.test(err.message)) return undefined;
          throw err;
        }
      });
    });
  }
}

export interface Merchant {
  accountId: string;
  chainId: number;
  depositAddress: string;
}

/** What the load runs against, made once before it starts. */
export interface Parties {
  sandbox: RehearsalPartner;
  production: RehearsalPartner;
  payers: Map<number, Payers>;
  /** The sandbox merchant: settles to a wallet, owns the bank account and a funded vault (refunds come from it). */
  merchant: Merchant;
  /** A sandbox account that sends Payments and has deposits. */
  sender: Merchant;
  bankAccountId: string;
  /** A sandbox account whose vault pays Payments. */
  vaultPayer: string;
  /** One production merchant per production chain. */
  productionMerchants: Merchant[];
}

export interface FlowContext {
  stack: RehearsalStack;
  parties: Parties;
  /** Unique per run and flow, for Idempotency-Keys and external ids. */
  key(what: string): string;
  /** Receive Payments of the sandbox merchant that were paid, for refunds to pick from. */
  paidForRefund: string[];
  /** Every Payment created, with what it was meant to end as. */
  planned: PlannedPayment[];
  /** Every transfer sent to a deposit address. */
  plannedDeposits: PlannedDeposit[];
  /** Payments whose incident is to be recovered once it shows: by the operator (CLI) or the partner (API). */
  recoveries: Array<{ paymentId: string; by: 'operator' | 'partner' }>;
  /** Holds a scenario planned, each released by the operator through the CLI. */
  releasedHolds: ReleasedHold[];
}

async function account(
  p: RehearsalPartner,
  ctx: { key(w: string): string },
  name: string,
  chainId: number,
  wallet: string,
): Promise<Merchant> {
  const created = await p.post('POST /v2/accounts', '/v2/accounts', { externalUserId: ctx.key(name) }, ctx.key(`account-${name}`));
  const id = created.body.account.id as string;
  const w = await p.post(
    'POST /v2/accounts/{id}/connected-wallets',
    `/v2/accounts/${id}/connected-wallets`,
    { chainId, address: wallet },
    ctx.key(`wallet-${name}`),
  );
  await p.put('PUT /v2/accounts/{id}/settlement-profile', `/v2/accounts/${id}/settlement-profile`, {
    connectedWalletId: w.body.connectedWallets[0].id,
  });
  const da = await p.post(
    'POST /v2/accounts/{id}/deposit-addresses',
    `/v2/accounts/${id}/deposit-addresses`,
    { chainId },
    ctx.key(`deposit-address-${name}`),
  );
  return { accountId: id, chainId, depositAddress: da.body.depositAddress.address as string };
}

const walletOf = (name: string) => privateKeyToAccount(keccak256(stringToHex(`partner-payments/rehearsal/wallet/${name}`))).address;

/** A vault with an active policy (the code read from the sandbox outbox), holding `fund` USDC. */
async function fundedVault(
  ctx: { stack: RehearsalStack; key(w: string): string },
  p: RehearsalPartner,
  payers: Payers,
  accountId: string,
  fund: bigint,
): Promise<void> {
  const vault = (await p.post('POST /v2/accounts/{id}/vault', `/v2/accounts/${accountId}/vault`, {}, ctx.key('vault'))).body.vault;
  await p.put('PUT /v2/accounts/{id}/vault/policy', `/v2/accounts/${accountId}/vault/policy`, {
    spendLimit: { amountAtomic: USDC(10_000).toString() },
    period: 'fixed_30_day',
    allowedTokens: [{ chainId: payers.chain.chainId, tokenAddress: payers.chain.token }],
    managedApproval: { method: 'email_otp', email: `${accountId}@example.com` },
  });
  await p.post('POST /v2/accounts/{id}/vault/policy/approval', `/v2/accounts/${accountId}/vault/policy/approval`, {});
  const code = await until(
    'the vault approval code in the sandbox outbox',
    60_000,
    async () =>
      (await readThroughRestart('the sandbox outbox', () => sandboxVaultCodes(ctx.stack.db.prisma, accountId, 1))).mails[0]?.code ??
      undefined,
  );
  await p.post('POST /v2/accounts/{id}/vault/policy/approval/verify', `/v2/accounts/${accountId}/vault/policy/approval/verify`, { code });
  await payers.send(vault.address as string, fund);
  await until(`the funding of vault ${vault.id} posted`, 120_000, async () =>
    (await readThroughRestart(`vault ${vault.id}'s receipts`, () =>
      ctx.stack.db.prisma.vaultReceipt.count({ where: { vaultId: vault.id, status: 'posted' } }),
    )) > 0
      ? true
      : undefined,
  );
}

/** A US bank account of the merchant, linked through the API and verified by the sandbox provider. */
async function linkedBankAccount(ctx: { key(w: string): string }, p: RehearsalPartner, accountId: string): Promise<string> {
  const linked = await p.post(
    'POST /v2/accounts/{id}/bank-accounts',
    `/v2/accounts/${accountId}/bank-accounts`,
    US_BANK_ACCOUNT,
    ctx.key('bank-account'),
  );
  const id = linked.body.bankAccount.id as string;
  await until(`bank account ${id} verified`, 120_000, async () => {
    const read = await p.get('GET /v2/accounts/{id}/bank-accounts/{id}', `/v2/accounts/${accountId}/bank-accounts/${id}`);
    return read.body.bankAccount.status === 'verified' ? true : undefined;
  });
  return id;
}

export async function prepareParties(
  ctx: { stack: RehearsalStack; key(w: string): string },
  sandbox: RehearsalPartner,
  production: RehearsalPartner,
): Promise<Parties> {
  const payers = new Map(ctx.stack.chains.map((c) => [c.chainId, new Payers(ctx.stack, c)] as const));
  await Promise.all([...payers.values()].map((p) => p.fund()));
  const sandboxChain = ctx.stack.chains.find((c) => c.environment === 'sandbox')!;
  const merchant = await account(sandbox, ctx, 'merchant', sandboxChain.chainId, walletOf('merchant'));
  const sender = await account(sandbox, ctx, 'sender', sandboxChain.chainId, walletOf('sender'));
  const vaultPayer = (
    await sandbox.post('POST /v2/accounts', '/v2/accounts', { externalUserId: ctx.key('vault-payer') }, ctx.key('account-vault-payer'))
  ).body.account.id as string;
  const sandboxPayers = payers.get(sandboxChain.chainId)!;
  const [bankAccountId] = await Promise.all([
    linkedBankAccount(ctx, sandbox, merchant.accountId),
    fundedVault(ctx, sandbox, sandboxPayers, merchant.accountId, USDC(5_000)),
    fundedVault(ctx, sandbox, sandboxPayers, vaultPayer, USDC(5_000)),
  ]);
  const productionMerchants: Merchant[] = [];
  for (const c of ctx.stack.chains.filter((x) => x.environment === 'production')) {
    productionMerchants.push(await account(production, ctx, `merchant-${c.chainId}`, c.chainId, walletOf(`merchant-${c.chainId}`)));
  }
  return { sandbox, production, payers, merchant, sender, bankAccountId, vaultPayer, productionMerchants };
}

/** 1 to 20 USDC, whole cents. */
export function amountOf(n: number): bigint {
  return USDC(1 + (n % 20)) + BigInt((n * 7919) % 100) * 10_000n;
}

function paymentBody(chainId: number, amountAtomic: bigint, rest: Record<string, unknown>) {
  return { amount: formatAtomic(amountAtomic, 6), assetCode: 'USDC', chainId, expiresInSeconds: 900, ...rest };
}

/** How much of the asked amount the payer sends, by plan (none for expire and cancel). */
const PAID: Record<PaymentPlan, (asked: bigint) => bigint> = {
  paid_in_full: (a) => a,
  overpaid: (a) => a + USDC(1) + 230_000n,
  underpaid: (a) => a / 2n,
  expire: () => 0n,
  cancel: () => 0n,
};

export async function createAndPay(
  ctx: FlowContext,
  p: RehearsalPartner,
  chainId: number,
  amountAtomic: bigint,
  rest: Record<string, unknown>,
  what: string,
  plan: PaymentPlan = 'paid_in_full',
): Promise<string> {
  const created = await p.post('POST /v2/payments', '/v2/payments', paymentBody(chainId, amountAtomic, rest), ctx.key(what));
  const payment = created.body.payment;
  const instructions = payment.funding.depositAddress;
  const asked = BigInt(instructions.amountAtomic as string);
  const paidAtomic = PAID[plan](asked);
  ctx.planned.push({ id: payment.id as string, plan, flow: what, paidAtomic, amountAtomic: asked });
  if (paidAtomic > 0n) await ctx.parties.payers.get(chainId)!.send(instructions.address as string, paidAtomic);
  return payment.id as string;
}

/** A sandbox receive Payment to the merchant, paid as planned. */
function merchantPayment(ctx: FlowContext, n: number, what: string, plan: PaymentPlan, rest: Record<string, unknown> = {}) {
  const m = ctx.parties.merchant;
  const body = { intent: 'receive', destination: { type: 'upa', accountId: m.accountId }, ...rest };
  // An underpayment pays half: at least 2 USDC asked, so what comes is over the 1 USDC minimum (less is dust, another incident).
  const asked = plan === 'underpaid' ? USDC(2) + amountOf(n) : amountOf(n);
  return createAndPay(ctx, ctx.parties.sandbox, m.chainId, asked, body, what, plan);
}

/** The shortest expiry the API takes: an underpaid or unpaid Payment expires within the run. */
const SHORT_EXPIRY = { expiresInSeconds: 60 };

export type FlowName =
  | 'receive'
  | 'receive-production'
  | 'send'
  | 'payout'
  | 'deposit'
  | 'refund'
  | 'vault-funding'
  | 'read'
  | 'overpay'
  | 'underpay'
  | 'expire'
  | 'cancel';

export const FLOWS: Record<FlowName, (ctx: FlowContext, n: number) => Promise<void>> = {
  async receive(ctx, n) {
    ctx.paidForRefund.push(await merchantPayment(ctx, n, 'receive', 'paid_in_full'));
  },
  async overpay(ctx, n) {
    ctx.recoveries.push({ paymentId: await merchantPayment(ctx, n, 'overpay', 'overpaid'), by: 'operator' });
  },
  async underpay(ctx, n) {
    ctx.recoveries.push({ paymentId: await merchantPayment(ctx, n, 'underpay', 'underpaid', SHORT_EXPIRY), by: 'partner' });
  },
  async expire(ctx, n) {
    await merchantPayment(ctx, n, 'expire', 'expire', SHORT_EXPIRY);
  },
  async cancel(ctx, n) {
    // A short expiry: a cancel that fails leaves a Payment that still comes to rest (and fails its plan).
    const id = await merchantPayment(ctx, n, 'cancel', 'cancel', SHORT_EXPIRY);
    const body = { reasonCode: 'customer_request', reason: 'rehearsal' };
    await ctx.parties.sandbox.post('POST /v2/payments/{id}/cancel', `/v2/payments/${id}/cancel`, body, ctx.key('cancel'));
  },
  async 'receive-production'(ctx, n) {
    const m = ctx.parties.productionMerchants[n % ctx.parties.productionMerchants.length]!;
    await createAndPay(
      ctx,
      ctx.parties.production,
      m.chainId,
      amountOf(n),
      { intent: 'receive', destination: { type: 'upa', accountId: m.accountId } },
      'receive-production',
    );
  },
  async send(ctx, n) {
    const { sender, merchant } = ctx.parties;
    await createAndPay(
      ctx,
      ctx.parties.sandbox,
      sender.chainId,
      amountOf(n),
      { intent: 'send', sourceAccountId: sender.accountId, destination: { type: 'upa', accountId: merchant.accountId } },
      'send',
    );
  },
  async payout(ctx, n) {
    const { sender, bankAccountId } = ctx.parties;
    await createAndPay(
      ctx,
      ctx.parties.sandbox,
      sender.chainId,
      USDC(10) + amountOf(n),
      { intent: 'send', sourceAccountId: sender.accountId, destination: { type: 'bank_account', bankAccountId } },
      'payout',
    );
  },
  async deposit(ctx, n) {
    const all = [ctx.parties.sender, ...ctx.parties.productionMerchants];
    const m = all[n % all.length]!;
    const txHash = await ctx.parties.payers.get(m.chainId)!.send(m.depositAddress, amountOf(n));
    ctx.plannedDeposits.push({ txHash, amountAtomic: amountOf(n) });
  },
  async refund(ctx, n) {
    // Half of the oldest paid Payment once it has succeeded; a settlement takes a while under load,
    // so one not yet there goes back to the queue (every Payment is checked at rest anyway).
    const p = ctx.parties.sandbox;
    const id = ctx.paidForRefund.shift();
    if (!id) return;
    let payment: any;
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(2000)) {
      const read = (await p.get('GET /v2/payments/{id}', `/v2/payments/${id}`)).body.payment;
      if (read.status === 'succeeded') payment = read;
      if (payment || ['failed', 'cancelled', 'expired'].includes(read.status)) break;
    }
    if (!payment) {
      ctx.paidForRefund.push(id);
      return;
    }
    const half = BigInt(payment.paymentAmount.amountAtomic as string) / 2n;
    await p.post(
      'POST /v2/payments/{id}/refunds',
      `/v2/payments/${id}/refunds`,
      { amount: formatAtomic(half, 6), reason: `rehearsal ${n}` },
      ctx.key('refund'),
    );
  },
  async 'vault-funding'(ctx, n) {
    const { merchant, vaultPayer } = ctx.parties;
    const p = ctx.parties.sandbox;
    const created = await p.post(
      'POST /v2/payments',
      '/v2/payments',
      paymentBody(merchant.chainId, amountOf(n), { intent: 'receive', destination: { type: 'upa', accountId: merchant.accountId } }),
      ctx.key('vault-funding'),
    );
    const payment = created.body.payment;
    const asked = BigInt(payment.funding.depositAddress.amountAtomic as string);
    ctx.planned.push({ id: payment.id as string, plan: 'paid_in_full', flow: 'vault-funding', paidAtomic: asked, amountAtomic: asked });
    const token = (await p.post('POST /v2/client/auth/exchange', '/v2/client/auth/exchange', { accountId: vaultPayer })).body
      .accessToken as string;
    const headers = { authorization: `Bearer ${token}`, 'x-svc-payment-secret': created.body.checkout.clientSecret as string };
    const read = await p.get('GET /v2/client/me/payments/{id}', `/v2/client/me/payments/${payment.id}`, headers);
    const option = read.body.options.find((o: { paymentMethodType: string }) => o.paymentMethodType === 'vault');
    if (!option?.execution) throw new Error(`no vault option offered for ${payment.id}: ${JSON.stringify(read.body.options)}`);
    await p.post(
      'POST /v2/client/me/payments/{id}/options/{id}/authorize',
      `/v2/client/me/payments/${payment.id}/options/${option.id}/authorize`,
      { actionId: option.execution.actionId, proof: { type: 'managed_authorization', authorization: 'approved' } },
      ctx.key('authorize'),
      headers,
    );
  },
  async read(ctx) {
    const p = ctx.parties.sandbox;
    await p.get('GET /v2/payments', '/v2/payments?limit=20');
    await p.get('GET /v2/accounts/{id}/deposits', `/v2/accounts/${ctx.parties.sender.accountId}/deposits?limit=20`);
  },
};

/** The order each load loop runs the flows in: Payments most, every kind every round. */
export const ROUND: FlowName[] = [
  'receive',
  'deposit',
  'receive-production',
  'send',
  'refund',
  'receive',
  'vault-funding',
  'payout',
  'overpay',
  'deposit',
  'underpay',
  'read',
  'expire',
  'cancel',
];
