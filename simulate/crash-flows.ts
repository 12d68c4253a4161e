import { SANDBOX_TOKEN_ADDRESS } from '../src/chain/sandbox';
import { formatAtomic } from '../src/domain/amounts/amounts';
import { sandboxVaultCodes } from '../src/domain/vaults/sandbox-mail';
import { US_BANK_ACCOUNT } from './partner';
import { until as waitUntil } from './until';
import { followVaultReceipts } from '../src/domain/vaults/vault-receipts';
import { DEPOSIT_WORKFLOW } from '../workflows/contracts/deposit';
import { FUND_RETURN_WORKFLOW, fundReturnWorkflowId } from '../workflows/contracts/fund-return';
import { PAYMENT_WORKFLOW } from '../workflows/contracts/payment';
import { VAULT_FUNDING_WORKFLOW, vaultFundingWorkflowId } from '../workflows/contracts/vault-funding';
import type { ChainDriver } from './chain-driver';
import type { PartnerClient } from './partner';
import type { AccountRecord } from './run';
import type { Stack } from './stack';
import type { WebhookReceiver } from './webhook-receiver';

/**
 * The money flows of the crash matrix (simulate/crash-matrix.ts): how each drives one resource through
 * the API and the sandbox chain, and which rows, books, legs and events make up its outcome.
 */

export type FlowName = 'payment' | 'deposit' | 'refund' | 'recovery' | 'payout' | 'vault-funding';
export const FLOW_NAMES: readonly FlowName[] = ['payment', 'deposit', 'refund', 'recovery', 'payout', 'vault-funding'];

export interface Matrix {
  stack: Stack;
  client: PartnerClient;
  credential: { appId: string; appSecret: string };
  recipient: AccountRecord;
  driver: ChainDriver;
  receiver: WebhookReceiver;
  log: (line: string) => void;
  /** Numbers each driven resource, for unique Idempotency-Keys and names. */
  serial: number;
  /** Made once per matrix run, on first use. */
  recipientVault?: Vault;
  bank?: { senderId: string; bankAccountId: string };
}

export type ResourceKind = 'payment' | 'deposit' | 'fund-return' | 'vault-funding';

interface Source {
  type: string;
  id: string;
}

/** A driven resource: its row and workflow, and where its outcome is read. */
export interface Resource {
  kind: ResourceKind;
  id: string;
  workflowId: string;
  /** Ledger postings (by source), settlement legs (by source), events (by resource id) of its outcome. */
  postings: Source[];
  legs: Source[];
  events: string[];
  /** Resources that must come to rest with it (the Payment a vault funding pays). */
  also?: Resource[];
}

export interface Flow {
  /** The workflow whose crash points are the flow's cells. */
  workflowType: string;
  /** Done with a clean worker before the traced or crashed part: what the flow acts on (a paid Payment, a funded vault). */
  prepare?(m: Matrix): Promise<Prepared>;
  /** Starts the resource; answers how to find it (a deposit's row may appear only after the crash). */
  start(m: Matrix, prepared: Prepared | undefined): Promise<() => Promise<Resource | undefined>>;
}

type Prepared = Record<string, string>;
type Vault = { id: string; address: string };

export const AMOUNT = 5_000_000n; // 5 USDC
const DUPLICATE = 1_000_000n;
const PREPARE_MS = 600_000;

/** As ./until's, but a probe that fails (a read cut by a crash) counts as no answer yet. */
export function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  return waitUntil(what, timeoutMs, () => probe().catch(() => undefined));
}

export function paymentResource(id: string): Resource {
  return { kind: 'payment', id, workflowId: id, postings: [{ type: 'payment', id }], legs: [{ type: 'payment', id }], events: [id] };
}

function returnResource(kind: 'refund' | 'incident_recovery', id: string, paymentId: string): Resource {
  return {
    kind: 'fund-return',
    id,
    workflowId: fundReturnWorkflowId(id),
    postings: [{ type: 'payment', id: paymentId }],
    legs: [{ type: kind, id }],
    events: [paymentId, id],
  };
}

export function paymentBody(m: Matrix, ref: string) {
  return {
    intent: 'receive',
    amount: formatAtomic(AMOUNT, 6),
    assetCode: 'USDC',
    chainId: m.stack.chainId,
    destination: { type: 'upa', accountId: m.recipient.id },
    expiresInSeconds: 3600,
    externalReference: ref,
  };
}

/** Pays a created Payment's escrow; answers once the transfer is broadcast. */
export async function payPayment(m: Matrix, created: { body: any }): Promise<Resource> {
  const payment = created.body.payment;
  await m.driver.send(payment.funding.depositAddress.address as string, AMOUNT);
  return paymentResource(payment.id as string);
}

function nextKey(m: Matrix, what: string): string {
  m.serial += 1;
  return `crash-matrix-${what}-${m.serial}`;
}

async function createPayment(m: Matrix) {
  const key = nextKey(m, 'payment');
  return m.client.post('/v2/payments', paymentBody(m, key), key);
}

/** A receive Payment paid in full, its workflow ended (a paid Payment at rest has succeeded). */
async function paidPayment(m: Matrix): Promise<{ id: string; escrow: string }> {
  const created = await createPayment(m);
  const resource = await payPayment(m, created);
  await atRest(m, resource);
  const status = await statusOf(m, resource);
  if (status !== 'succeeded') throw new Error(`payment ${resource.id} paid in full came to rest ${status}, not succeeded`);
  return { id: resource.id, escrow: created.body.payment.funding.depositAddress.address as string };
}

type Incident = { id: string; kind: string; status: string };

/**
 * A second transfer to a succeeded Payment, sent only once the Payment is at rest: it is then always a
 * duplicate (an incident held for recovery), never an excess of a Payment still confirming, so a
 * clean run and a crashed one start from the same state. Answers once the incident is held and the
 * Payment's workflow that recorded it has ended.
 */
async function duplicateOf(m: Matrix, payment: { id: string; escrow: string }): Promise<Incident> {
  await m.driver.send(payment.escrow, DUPLICATE);
  const incidents = await until(`an incident of payment ${payment.id} after its second transfer`, PREPARE_MS, async () => {
    m.driver.poke();
    const items = (await m.client.get(`/v2/payments/${payment.id}/incidents`)).body.items as Incident[];
    return items.length > 0 ? items : undefined;
  });
  const [incident] = incidents;
  if (incidents.length !== 1 || incident!.kind !== 'duplicate' || incident!.status !== 'pending')
    throw new Error(`payment ${payment.id}: expected one pending duplicate incident, got ${JSON.stringify(incidents)}`);
  await atRest(m, paymentResource(payment.id));
  return incident!;
}

const held = (r: { status: string; held: boolean }) => r.held;

/** Each kind's row: its status (held or not); undefined while it does not exist. */
const ROWS: Record<
  ResourceKind,
  { terminal: string[]; read(m: Matrix, id: string): Promise<{ status: string; held: boolean } | undefined> }
> = {
  payment: {
    terminal: ['succeeded', 'failed', 'cancelled', 'expired'],
    read: async (m, id) => {
      const p = await m.stack.db.prisma.payment.findUnique({ where: { id } });
      if (!p) return undefined;
      const isHeld = p.operationalState === 'requires_intervention';
      return { status: isHeld ? `held (${p.operationalReasonCode})` : p.status, held: isHeld };
    },
  },
  deposit: {
    terminal: ['settled', 'reversed', 'failed', 'ignored'],
    read: async (m, id) => {
      const d = await m.stack.db.prisma.deposit.findUnique({ where: { id } });
      return d ? { status: d.status, held: d.status === 'requires_intervention' } : undefined;
    },
  },
  'fund-return': {
    terminal: ['confirmed', 'failed', 'requires_intervention'],
    read: async (m, id) => {
      const r = await m.stack.db.prisma.fundReturn.findUnique({ where: { id } });
      return r ? { status: r.status, held: r.status === 'requires_intervention' } : undefined;
    },
  },
  'vault-funding': {
    terminal: ['confirmed', 'failed'],
    read: async (m, id) => {
      const o = await m.stack.db.prisma.vaultFundingOperation.findUnique({ where: { id } });
      return o ? { status: o.status, held: false } : undefined;
    },
  },
};

export async function statusOf(m: Matrix, r: Resource): Promise<string> {
  const row = await ROWS[r.kind].read(m, r.id);
  if (!row) throw new Error(`${r.kind} ${r.id} has no row`);
  return row.status;
}

async function workflowRunning(m: Matrix, workflowId: string): Promise<boolean> {
  return (await m.stack.engine.listWorkflows(`WorkflowId = '${workflowId}' AND ExecutionStatus = 'Running'`)).length > 0;
}

/** Waits until the resource (and each it brings along) is terminal or held, and its workflow ended unless held. */
export async function atRest(m: Matrix, r: Resource, timeoutMs = PREPARE_MS): Promise<void> {
  for (const one of [r, ...(r.also ?? [])]) {
    await until(`${one.kind} ${one.id} at rest`, timeoutMs, async () => {
      m.driver.poke();
      const row = await ROWS[one.kind].read(m, one.id);
      if (!row || (!ROWS[one.kind].terminal.includes(row.status) && !held(row))) return undefined;
      return row.held || !(await workflowRunning(m, one.workflowId)) ? true : undefined;
    });
  }
}

async function clientApi(m: Matrix, path: string, headers: Record<string, string>, body?: unknown): Promise<any> {
  const res = await fetch(`${m.stack.apiUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const parsed: unknown = await res.json();
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

/** The account's vault, its policy active (USDC of the stack's chain, a limit no run reaches), approved with the sandbox outbox's code. */
async function activeVault(m: Matrix, accountId: string): Promise<Vault> {
  const vault = (await m.client.post(`/v2/accounts/${accountId}/vault`, {}, nextKey(m, 'vault'))).body.vault as Vault;
  await m.client.put(`/v2/accounts/${accountId}/vault/policy`, {
    spendLimit: { amountAtomic: String(2_000n * AMOUNT) },
    period: 'fixed_30_day',
    allowedTokens: [{ chainId: m.stack.chainId, tokenAddress: SANDBOX_TOKEN_ADDRESS }],
    managedApproval: { method: 'email_otp', email: `crash-matrix-${m.serial}@example.com` },
  });
  await m.client.post(`/v2/accounts/${accountId}/vault/policy/approval`, {}, nextKey(m, 'approval'));
  const code = await until(
    'the approval code in the sandbox outbox',
    60_000,
    async () => (await sandboxVaultCodes(m.stack.db.prisma, accountId, 1)).mails[0]?.code ?? undefined,
  );
  await m.client.post(`/v2/accounts/${accountId}/vault/policy/approval/verify`, { code }, nextKey(m, 'verify'));
  return vault;
}

/** Sends AMOUNT into the vault and waits until its receipt is posted (the reconciliation pass's step, run here at once). */
async function fundVault(m: Matrix, vault: Vault): Promise<void> {
  const prisma = m.stack.db.prisma;
  const posted = () => prisma.vaultReceipt.count({ where: { vaultId: vault.id, status: 'posted' } });
  const before = await posted();
  await m.driver.send(vault.address, AMOUNT);
  await until(`a receipt of vault ${vault.id} posted`, PREPARE_MS, async () => {
    await followVaultReceipts({ prisma, chains: m.stack.chain.chains });
    return (await posted()) > before ? true : undefined;
  });
}

async function newAccount(m: Matrix, name: string): Promise<string> {
  const key = nextKey(m, name);
  return (await m.client.post('/v2/accounts', { externalUserId: key }, key)).body.account.id as string;
}

/** A linked US bank account of the recipient, verified by the sandbox provider, and an account that sends. */
async function bankParty(m: Matrix): Promise<{ senderId: string; bankAccountId: string }> {
  if (m.bank) return m.bank;
  const linked = await m.client.post(`/v2/accounts/${m.recipient.id}/bank-accounts`, US_BANK_ACCOUNT, nextKey(m, 'bank-account'));
  const bankAccountId = linked.body.bankAccount.id as string;
  await until(`bank account ${bankAccountId} verified`, PREPARE_MS, async () => {
    const read = await m.client.get(`/v2/accounts/${m.recipient.id}/bank-accounts/${bankAccountId}`);
    return read.body.bankAccount.status === 'verified' ? true : undefined;
  });
  m.bank = { senderId: await newAccount(m, 'sender'), bankAccountId };
  return m.bank;
}

export const FLOWS: Record<FlowName, Flow> = {
  /** A receive Payment, created with an Idempotency-Key and paid in full. */
  payment: {
    workflowType: PAYMENT_WORKFLOW,
    start: async (m) => {
      const resource = await payPayment(m, await createPayment(m));
      return async () => resource;
    },
  },
  /** A transfer to the recipient's deposit address; its row (and so its id) may come only after a crash. */
  deposit: {
    workflowType: DEPOSIT_WORKFLOW,
    start: async (m) => {
      const txHash = (await m.driver.send(m.recipient.depositAddress, AMOUNT)).toLowerCase();
      return async () => {
        const row = await m.stack.db.prisma.deposit.findFirst({ where: { txHash }, select: { id: true, workflowId: true } });
        return row
          ? {
              ...paymentResource(row.id),
              kind: 'deposit',
              workflowId: row.workflowId,
              postings: [{ type: 'deposit', id: row.id }],
              legs: [{ type: 'deposit', id: row.id }],
            }
          : undefined;
      };
    },
  },
  /** A full refund of a succeeded Payment, paid from the recipient's vault (funded with its amount first). */
  refund: {
    workflowType: FUND_RETURN_WORKFLOW,
    prepare: async (m) => {
      m.recipientVault ??= await activeVault(m, m.recipient.id);
      await fundVault(m, m.recipientVault);
      return { paymentId: (await paidPayment(m)).id };
    },
    start: async (m, p) => {
      const created = await m.client.post(`/v2/payments/${p!.paymentId}/refunds`, { reason: 'crash matrix' }, nextKey(m, 'refund'));
      const resource = returnResource('refund', created.body.refund.id as string, p!.paymentId!);
      return async () => resource;
    },
  },
  /** A second transfer to a succeeded Payment (a duplicate, held as an incident) returned to its payer from the escrow. */
  recovery: {
    workflowType: FUND_RETURN_WORKFLOW,
    prepare: async (m) => {
      const payment = await paidPayment(m);
      const incident = await duplicateOf(m, payment);
      return { paymentId: payment.id, incidentId: incident.id };
    },
    start: async (m, p) => {
      const created = await m.client.post(
        `/v2/payments/${p!.paymentId}/incident-recoveries`,
        { incidentId: p!.incidentId },
        nextKey(m, 'recovery'),
      );
      const resource = returnResource('incident_recovery', created.body.incidentRecovery.id as string, p!.paymentId!);
      return async () => resource;
    },
  },
  /** A send Payment to the recipient's linked bank account through the sandbox off-ramp provider, its escrow funded. */
  payout: {
    workflowType: PAYMENT_WORKFLOW,
    prepare: async (m) => bankParty(m),
    start: async (m, p) => {
      const key = nextKey(m, 'payout');
      const body = {
        intent: 'send',
        amount: formatAtomic(AMOUNT, 6),
        assetCode: 'USDC',
        chainId: m.stack.chainId,
        sourceAccountId: p!.senderId,
        destination: { type: 'bank_account', bankAccountId: p!.bankAccountId },
        externalReference: key,
      };
      const resource = await payPayment(m, await m.client.post('/v2/payments', body, key));
      return async () => resource;
    },
  },
  /** A receive Payment paid from a payer's vault (a fresh account, vault and policy each run) with its Vault option. */
  'vault-funding': {
    workflowType: VAULT_FUNDING_WORKFLOW,
    prepare: async (m) => {
      const payerId = await newAccount(m, 'payer');
      const vault = await activeVault(m, payerId);
      await fundVault(m, vault);
      return { payerId, vaultId: vault.id };
    },
    start: async (m, p) => {
      const created = await createPayment(m);
      const payment = created.body.payment;
      const token = (await m.client.post('/v2/client/auth/exchange', { accountId: p!.payerId })).body.accessToken as string;
      const headers = { authorization: `Bearer ${token}`, 'x-svc-payment-secret': created.body.checkout.clientSecret as string };
      const read = await clientApi(m, `/v2/client/me/payments/${payment.id}`, headers);
      const option = read.options.find((o: { paymentMethodType: string }) => o.paymentMethodType === 'vault');
      if (!option?.execution) throw new Error(`no Vault option for ${payment.id}: ${JSON.stringify(read.options)}`);
      const body = { actionId: option.execution.actionId, proof: { type: 'managed_authorization', authorization: 'approved' } };
      const answer = await clientApi(
        m,
        `/v2/client/me/payments/${payment.id}/options/${option.id}/authorize`,
        { ...headers, 'idempotency-key': nextKey(m, 'authorize') },
        body,
      );
      const opId = answer.fundingOperation.id as string;
      const resource: Resource = {
        kind: 'vault-funding',
        id: opId,
        workflowId: vaultFundingWorkflowId(opId),
        postings: [{ type: 'vault', id: p!.vaultId! }],
        legs: [{ type: 'vault_funding', id: opId }],
        events: [p!.vaultId!, opId],
        also: [paymentResource(payment.id as string)],
      };
      return async () => resource;
    },
  },
};
