import { cliActing, resolveFromCli } from './holds';
import { recoverFunds } from '../domain/operators/operator-approvals';
import { parseArgs } from 'node:util';
import type { Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ServiceConfig } from '../config';
import { loadEnvironments } from '../config/environments';
import { createEvmChain } from '../chain/evm';
import { mintTo, SANDBOX_TOKEN_ADDRESS } from '../chain/sandbox';
import { remainingOf } from '../domain/payments/payment-view';
import { toAtomic, formatAtomic } from '../domain/amounts/amounts';
import { openDatabase } from '../runtime/database';
import { serviceChains, UsageError, withEngine } from './shared';
import { ZAdminCreateRecovery } from '../domain/returns/fund-return.schemas';
import { parseInput } from '../domain/requests/validation';

import type { Register } from './shared';

// anvil's well-known dev account #1: funded with test ETH on every fresh sandbox chain. Never real money.
const SANDBOX_PAYER_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';

async function loadPaymentRow(config: ServiceConfig, paymentId: string) {
  const opened = await openDatabase(config);
  try {
    return await opened.db.prisma.payment.findUnique({ where: { id: paymentId } });
  } finally {
    await opened.close();
  }
}

/**
 *   payments resolve <paymentId> --action retry|mark-settled|fail [--tx <hash>] [--reason <text>] [--actor <who>]
 *   payments reconcile [--grace-seconds n]
 *       runs one pass of the orphan Payment reconciler (a workflow on the service's worker; the schedule
 *       runs it every minute) and prints {cutoff, checked, startedCount, started, missingCount, missing}.
 *   payments recover <paymentId> --incident <incidentId> [--to <address>] --reason <text> --actor <who>
 *       returns an incident's funds from the Payment's escrow (to the incident transfer's sender unless
 *       --to is given) and prints the incident recovery; a FundReturnWorkflow on the worker sends it.
 *   sandbox pay <paymentId> [--amount <decimal>]
 */
export function registerPaymentCommands(register: Register): void {
  register('payments resolve', (argv, ctx) =>
    resolveFromCli(
      ctx,
      'payment',
      argv,
      'usage: payments resolve <paymentId> --action retry|mark-settled|fail [--tx <hash>] [--reason <text>] [--actor <who>]',
    ),
  );

  register('payments recover', async (argv, ctx) => {
    const usage = 'usage: payments recover <paymentId> --incident <incidentId> [--to <address>] --reason <text> --actor <who>';
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { incident: { type: 'string' }, to: { type: 'string' }, reason: { type: 'string' }, actor: { type: 'string' } },
      strict: true,
    });
    const paymentId = positionals[0];
    if (!paymentId || !values.incident || !values.reason || !values.actor) throw new UsageError(usage);
    const { actor, ...input } = parseInput(
      ZAdminCreateRecovery,
      { incidentId: values.incident, reason: values.reason, actor: values.actor, ...(values.to ? { destinationAddress: values.to } : {}) },
      'body',
    );
    const config = ctx.config();
    const { chains, addressBook: custody } = serviceChains(config, ctx.env);
    const opened = await openDatabase(config);
    try {
      const who = await cliActing(opened.db.prisma, actor);
      const outcome = await withEngine(config, (engine) =>
        recoverFunds({ prisma: opened.db.prisma, custody, chains, engine }, who, paymentId, input),
      );
      return 'done' in outcome ? outcome.done : outcome;
    } finally {
      await opened.close();
    }
  });

  register('payments reconcile', async (argv, ctx) => {
    const { values } = parseArgs({ args: argv, options: { 'grace-seconds': { type: 'string' } }, strict: true });
    const grace = values['grace-seconds'] === undefined ? undefined : Number(values['grace-seconds']);
    if (grace !== undefined && (!Number.isInteger(grace) || grace < 0)) throw new Error('--grace-seconds takes a whole number of seconds');
    return withEngine(ctx.config(), (engine) => engine.runPaymentReconciliation(grace === undefined ? {} : { graceSeconds: grace }));
  });

  register('sandbox pay', async (argv, ctx) => {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { amount: { type: 'string' } },
      strict: true,
    });
    const paymentId = positionals[0];
    if (!paymentId) throw new Error('usage: sandbox pay <paymentId> [--amount <decimal>]');
    const config = ctx.config();
    const payment = await loadPaymentRow(config, paymentId);
    if (!payment?.escrowAddress) throw new Error(`no open Payment ${paymentId}`);
    const network = loadEnvironments(config.environmentsFile).environments.sandbox.networks.find((n) => n.chainId === payment.chainId);
    if (!network || payment.tokenAddress.toLowerCase() !== SANDBOX_TOKEN_ADDRESS.toLowerCase()) {
      throw new Error('sandbox pay only pays Payments on the sandbox chain');
    }
    const rpcUrl = `http://127.0.0.1:${config.anvil.embeddedPort}`;
    const amountAtomic = values.amount ? toAtomic(values.amount, payment.decimals) : remainingOf(payment);
    const payer = privateKeyToAccount(SANDBOX_PAYER_KEY);
    await mintTo({ rpcUrl, to: payer.address, amountAtomic });
    const chain = createEvmChain({ chainId: payment.chainId, rpcUrl });
    const txHash = await chain.sendTokenTransfer({
      from: payer,
      token: payment.tokenAddress as Address,
      to: payment.escrowAddress as Address,
      amountAtomic,
    });
    await withEngine(config, (engine) => engine.pokeChainScanner(payment.chainId));
    return { paymentId, txHash, from: payer.address, to: payment.escrowAddress, amount: formatAtomic(amountAtomic, payment.decimals) };
  });
}
