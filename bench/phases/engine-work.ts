import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Address } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { archiveWebhookEndpoint } from '../../src/domain/webhooks/endpoints';
import { sandboxVaultCodes } from '../../src/domain/vaults/sandbox-mail';
import { followVaultReceipts } from '../../src/domain/vaults/vault-receipts';
import { connectEngineProbes, type EngineProbes } from '../../src/temporal/probes';
import { paymentWorkflowId } from '../../workflows/contracts/payment';
import { fundReturnWorkflowId } from '../../workflows/contracts/fund-return';
import { vaultFundingWorkflowId } from '../../workflows/contracts/vault-funding';
import { webhookDeliveryWorkflowId } from '../../workflows/contracts/webhooks';
import { until } from '../../simulate/until';
import type { BenchContext } from '../context';
import { fundedPayer, keepMining } from '../chain';
import { flowEngineWork, runEnded, type FlowEngineWork, type History } from '../engine-work';
import { ENGINE_WORK_FLOWS, type EngineWorkFlow } from '../figures';
import { accountCreatedEndpoint } from './webhooks';

const USDC = (n: number) => BigInt(n) * 1_000_000n;
/** How long one flow may take to come to rest (a loaded machine, the cluster's round trips). */
const WAIT_MS = 300_000;

/** What the flows share: the stack, the engine's histories and a funded payer. */
interface Flows {
  ctx: BenchContext;
  probes: EngineProbes;
  payer: PrivateKeyAccount;
  /** The receive Payment of the first flow, refunded by the fourth. */
  paid?: string;
}

/**
 * One run of each flow, end to end through the API, the chain and the worker, and what it cost the
 * engine: its workflows' histories, once each run has ended, read as workflow tasks, activity tasks,
 * local activities and history events (bench/engine-work.ts). Counts, not times. A block every 100 ms.
 */
export async function engineWorkPhase(ctx: BenchContext): Promise<void> {
  const { service } = ctx;
  const rpc = service.rpcUrl!;
  const probes = await connectEngineProbes({
    address: service.temporalAddress,
    namespace: service.config.temporal.namespace,
    taskQueue: service.config.temporal.taskQueue,
  });
  const stopMining = keepMining(rpc, 100);
  try {
    const flows: Flows = { ctx, probes, payer: await fundedPayer(rpc, USDC(50)) };
    const runs: Record<EngineWorkFlow, (f: Flows) => Promise<FlowEngineWork>> = {
      receivePaymentSucceeded,
      depositSettled,
      webhookDeliveredFirstAttempt,
      refund,
      vaultFunding,
    };
    ctx.figures.engineWork = {};
    for (const [flow, run] of Object.entries(runs) as Array<[EngineWorkFlow, (f: Flows) => Promise<FlowEngineWork>]>) {
      const work = await run(flows);
      ctx.figures.engineWork[flow] = work;
      ctx.out(`engine work, ${ENGINE_WORK_FLOWS[flow]} (${work.workflowTypes.join(' + ')}): ${showWork(work)}`);
    }
  } finally {
    await stopMining();
    await probes.close();
  }
}

function showWork(w: FlowEngineWork): string {
  const failed = [
    w.failedWorkflowTasks ? `${w.failedWorkflowTasks} failed` : '',
    w.timedOutWorkflowTasks ? `${w.timedOutWorkflowTasks} timed out` : '',
  ].filter(Boolean);
  return (
    `${w.workflowTasks} workflow tasks${failed.length ? ` (and ${failed.join(', ')})` : ''}, ${w.activityTasks} activity tasks, ` +
    `${w.localActivities} local activities, ${w.historyEvents} history events`
  );
}

/** The flow's work once every one of its workflows has ended (a run still going would be counted short). */
async function workOf(f: Flows, workflowIds: string[]): Promise<FlowEngineWork> {
  const histories: History[] = [];
  for (const id of workflowIds) {
    // Not found yet (its start is on the way) reads as not ended.
    const ended = async () => {
      const history = await f.probes.workflowHistory(id).catch(() => undefined);
      return history && runEnded(history) ? history : undefined;
    };
    histories.push(await until(`workflow ${id} ended`, WAIT_MS, ended));
  }
  return flowEngineWork(histories);
}

function expect(what: string, actual: unknown, wanted: unknown): void {
  if (actual !== wanted) throw new Error(`engine-work: ${what} is ${String(actual)}, not ${String(wanted)}`);
}

const send = (f: Flows, to: string, amountAtomic: bigint) =>
  f.ctx.service.chain.chains
    .get(f.ctx.network.chainId)
    .sendTokenTransfer({ from: f.payer, token: f.ctx.tokenAddress, to: to as Address, amountAtomic });

async function receivePaymentSucceeded(f: Flows): Promise<FlowEngineWork> {
  const { payment } = await f.ctx.createPayment();
  await send(f, payment.funding.depositAddress.address, BigInt(payment.funding.depositAddress.amountAtomic));
  const work = await workOf(f, [paymentWorkflowId(payment.id)]);
  expect(`Payment ${payment.id}'s status`, await paymentStatus(f, payment.id), 'succeeded');
  f.paid = payment.id;
  return work;
}

const paymentStatus = async (f: Flows, id: string) =>
  (await f.ctx.service.database.db.prisma.payment.findUniqueOrThrow({ where: { id }, select: { status: true } })).status;

async function depositSettled(f: Flows): Promise<FlowEngineWork> {
  const { ctx } = f;
  const prisma = ctx.service.database.db.prisma;
  const address = await ctx.api(`/v2/accounts/${ctx.accountId}/deposit-addresses`, {
    body: { chainId: ctx.network.chainId },
    key: randomUUID(),
  });
  const txHash = await send(f, address.depositAddress.address, USDC(5));
  const seen = () => prisma.deposit.findFirst({ where: { txHash: { equals: txHash, mode: 'insensitive' } } });
  const deposit = await until(`the deposit of ${txHash} recorded`, WAIT_MS, async () => (await seen()) ?? undefined);
  const work = await workOf(f, [deposit.workflowId]);
  expect(`deposit ${deposit.id}'s status`, (await seen())?.status, 'settled');
  return work;
}

async function webhookDeliveredFirstAttempt(f: Flows): Promise<FlowEngineWork> {
  const { ctx } = f;
  const prisma = ctx.service.database.db.prisma;
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200).end('ok'));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    const endpoint = await accountCreatedEndpoint(ctx, (receiver.address() as AddressInfo).port);
    await ctx.api('/v2/accounts', { body: { externalUserId: `bench-engine-work-${randomUUID()}` } });
    const delivered = await until('the webhook delivered', WAIT_MS, async () => {
      const d = await prisma.webhookDelivery.findFirst({ where: { endpointId: endpoint.id, status: 'succeeded' } });
      return d ?? undefined;
    });
    const work = await workOf(f, [webhookDeliveryWorkflowId(delivered.eventId, delivered.endpointId, delivered.round)]);
    expect('attempts of the delivery', await prisma.webhookAttempt.count({ where: { deliveryId: delivered.id } }), 1);
    await archiveWebhookEndpoint(prisma, { endpointId: endpoint.id });
    return work;
  } finally {
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}

/** The first flow's Payment refunded in full from the merchant's vault, to its payer. */
async function refund(f: Flows): Promise<FlowEngineWork> {
  const { ctx } = f;
  await fundedVault(f, ctx.accountId, USDC(10));
  const { refund } = await ctx.api(`/v2/payments/${f.paid!}/refunds`, { body: {}, key: randomUUID() });
  const work = await workOf(f, [fundReturnWorkflowId(refund.id)]);
  const row = await ctx.service.database.db.prisma.fundReturn.findUniqueOrThrow({ where: { id: refund.id } });
  expect(`refund ${refund.id}'s status`, row.status, 'confirmed');
  return work;
}

/**
 * A receive Payment paid from another account's vault, as a payer's client authorizes it: the
 * funding's workflow sends to the escrow, and the Payment's own workflow takes it from there.
 */
async function vaultFunding(f: Flows): Promise<FlowEngineWork> {
  const { ctx } = f;
  const payerAccount = (await ctx.api('/v2/accounts', { body: { externalUserId: `bench-vault-payer-${randomUUID()}` } })).account.id;
  await fundedVault(f, payerAccount, USDC(10));
  const created = await ctx.createPayment();
  const id = created.payment.id as string;
  const { accessToken } = await ctx.api('/v2/client/auth/exchange', { body: { accountId: payerAccount } });
  const headers = { authorization: `Bearer ${accessToken}`, 'x-svc-payment-secret': created.checkout.clientSecret };
  const { options } = await ctx.api(`/v2/client/me/payments/${id}`, { headers });
  const option = options.find((o: { paymentMethodType: string }) => o.paymentMethodType === 'vault');
  if (!option?.execution) throw new Error(`engine-work: no vault option offered for ${id}: ${JSON.stringify(options)}`);
  await ctx.api(`/v2/client/me/payments/${id}/options/${option.id}/authorize`, {
    body: { actionId: option.execution.actionId, proof: { type: 'managed_authorization', authorization: 'approved' } },
    key: randomUUID(),
    headers,
  });
  const prisma = ctx.service.database.db.prisma;
  const op = await prisma.vaultFundingOperation.findFirstOrThrow({ where: { paymentId: id } });
  const work = await workOf(f, [paymentWorkflowId(id), vaultFundingWorkflowId(op.id)]);
  expect(`Payment ${id}'s status`, await paymentStatus(f, id), 'succeeded');
  return work;
}

/** The account's vault with its policy active (the code read from the sandbox outbox), holding `amountAtomic` posted. */
async function fundedVault(f: Flows, accountId: string, amountAtomic: bigint): Promise<void> {
  const { ctx } = f;
  const prisma = ctx.service.database.db.prisma;
  const { vault } = await ctx.api(`/v2/accounts/${accountId}/vault`, { body: {}, key: randomUUID() });
  await ctx.api(`/v2/accounts/${accountId}/vault/policy`, {
    method: 'PUT',
    body: {
      spendLimit: { amountAtomic: USDC(1000).toString() },
      period: 'fixed_30_day',
      allowedTokens: [{ chainId: ctx.network.chainId, tokenAddress: ctx.tokenAddress }],
      managedApproval: { method: 'email_otp', email: `${accountId}@example.com` },
    },
  });
  await ctx.api(`/v2/accounts/${accountId}/vault/policy/approval`, { body: {} });
  const code = await until('the vault approval code in the sandbox outbox', WAIT_MS, async () => {
    return (await sandboxVaultCodes(prisma, accountId, 1)).mails[0]?.code ?? undefined;
  });
  await ctx.api(`/v2/accounts/${accountId}/vault/policy/approval/verify`, { body: { code } });
  await send(f, vault.address, amountAtomic);
  // The reconciliation pass posts receipts on its schedule: followed here, not waited for.
  await until(`vault ${vault.id}'s funding posted`, WAIT_MS, async () => {
    await followVaultReceipts({ prisma, chains: ctx.service.chain.chains });
    return (await prisma.vaultReceipt.count({ where: { vaultId: vault.id, status: 'posted' } })) > 0 ? true : undefined;
  });
}
