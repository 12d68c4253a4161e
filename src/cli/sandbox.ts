import { parseArgs, type ParseArgsConfig } from 'node:util';
import { createPublicClient, type Address } from 'viem';
import { rpcTransport } from '../chain/transport';
import type { ServiceConfig } from '../config';
import { findAsset, loadEnvironments, type TNetworkConfig } from '../config/environments';
import { checkEvmAddress } from '../chain/address';
import { createChainFaults, jsonRpc, type BlockRef, type ChainFaults, type MiningMode } from '../chain/chain-faults';
import { SANDBOX_TOKEN_ADDRESS, sendTestTokens } from '../chain/sandbox';
import { formatAtomic, toAtomic } from '../domain/amounts/amounts';
import { UsageError, withEngine } from './shared';
import { openDatabase } from '../runtime/database';
import { sandboxVaultCodes } from '../domain/vaults/sandbox-mail';

import type { CliContext, Register } from './shared';

/**
 * Sandbox chain rehearsals: a partner moves test USDC and makes the sandbox chain misbehave (no blocks,
 * a burst of blocks, a reorg) to see what their integration does. Only ever the sandbox environment's
 * network on the embedded anvil (`npm start`), never a real chain: the node must answer as anvil with
 * the sandbox chain id.
 */
export const SANDBOX_USAGE = `  npm run cli -- sandbox transfer --to <address> --amount <decimal> [--token <symbol>]
  npm run cli -- sandbox mine [--blocks <n>]
  npm run cli -- sandbox pause-mining
  npm run cli -- sandbox resume-mining [--interval <seconds, 0 = a block per transaction>]
  npm run cli -- sandbox reorg --depth <n> [--reinclude]
  npm run cli -- sandbox fee-spike --gwei <decimal> --seconds <n>
  npm run cli -- sandbox vault-codes --account <accountId> [--limit <n>]`;

/** A fee spike holds the sandbox for at most an hour: the CLI stays up while it holds. */
const MAX_FEE_SPIKE_SECONDS = 3_600;

/** The mining mode `npm start` runs the sandbox chain in (src/runtime/service.ts): a block a second. */
const DEFAULT_INTERVAL_SECONDS = 1;
/** How long `sandbox transfer` waits for its block while the chain mines; paused, it doesn't wait. */
const RECEIPT_TIMEOUT_MS = 30_000;

interface SandboxChain {
  network: TNetworkConfig;
  rpcUrl: string;
  faults: ChainFaults;
}

async function sandboxChain(config: ServiceConfig): Promise<SandboxChain> {
  const network = loadEnvironments(config.environmentsFile).environments.sandbox.networks[0];
  if (!network) throw new Error('the sandbox environment configures no network');
  const rpcUrl = `http://127.0.0.1:${config.anvil.embeddedPort}`;
  let chainId: number;
  try {
    chainId = Number(await jsonRpc<string>(rpcUrl, 'eth_chainId'));
    await jsonRpc(rpcUrl, 'anvil_getAutomine'); // anvil's own method: a real node refuses it
  } catch (err) {
    throw new Error(
      `no sandbox chain (anvil) answers at ${rpcUrl}; is \`npm start\` running? (${err instanceof Error ? err.message : String(err)})`,
    );
  }
  if (chainId !== network.chainId) {
    throw new Error(`the node at ${rpcUrl} is chain ${chainId}, not the sandbox chain ${network.chainId}`);
  }
  return { network, rpcUrl, faults: createChainFaults(rpcUrl) };
}

function parse<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, usage: string) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError(`${err instanceof Error ? err.message : String(err)}\n${usage}`);
  }
}

function positiveInt(value: string | undefined, name: string, fallback?: number, min = 1): number {
  if (value === undefined && fallback !== undefined) return fallback;
  const n = Number(value);
  if (value === undefined || !/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min) {
    throw new UsageError(`--${name} must be an integer ≥ ${min}${value === undefined ? '' : `, got ${value}`}`);
  }
  return n;
}

const block = (b: BlockRef) => ({ number: Number(b.number), hash: b.hash });

/** A poke only hurries the scanner (it polls anyway): a Temporal that can't be reached is reported, not fatal. */
async function pokeScanner(ctx: CliContext, chainId: number): Promise<boolean> {
  try {
    await withEngine(ctx.config(), (engine) => engine.pokeChainScanner(chainId));
    return true;
  } catch (err) {
    ctx.warn(`warning: could not poke the chain scanner: ${err instanceof Error ? err.message : String(err)}\n`);
    return false;
  }
}

/**
 *   sandbox transfer --to <address> --amount <decimal> [--token <symbol>]
 *   sandbox mine [--blocks <n>]
 *   sandbox pause-mining
 *   sandbox resume-mining [--interval <seconds>]
 *   sandbox reorg --depth <n> [--reinclude]
 *   sandbox fee-spike --gwei <decimal> --seconds <n>
 */
export function registerSandboxCommands(register: Register): void {
  register('sandbox transfer', async (argv, ctx) => {
    const usage = 'usage: sandbox transfer --to <address> --amount <decimal> [--token <symbol>]';
    const values = parse(argv, { to: { type: 'string' }, amount: { type: 'string' }, token: { type: 'string' } }, usage);
    if (!values.to || !values.amount) throw new UsageError(`sandbox transfer needs --to and --amount\n${usage}`);
    const to = checkEvmAddress(values.to);
    if (!to.ok) throw new UsageError(`--to ${to.reason}`);
    const config = ctx.config();
    const { network, rpcUrl, faults } = await sandboxChain(config);
    const symbol = values.token ?? network.defaultAsset;
    const asset = findAsset(network, symbol);
    if (!asset)
      throw new UsageError(`--token ${symbol} is not an asset of the sandbox network (${network.assets.map((a) => a.symbol).join(', ')})`);
    if (asset.tokenAddress.toLowerCase() !== SANDBOX_TOKEN_ADDRESS.toLowerCase()) {
      throw new Error(`${symbol} is not the sandbox's mintable test token`);
    }
    let amountAtomic: bigint;
    try {
      amountAtomic = toAtomic(values.amount, asset.decimals);
    } catch (err) {
      throw new UsageError(`--amount ${err instanceof Error ? err.message : String(err)}`);
    }
    if (amountAtomic <= 0n) throw new UsageError('--amount must be more than 0');

    const mining = await faults.miningMode();
    const sent = await sendTestTokens({ rpcUrl, to: to.address, amountAtomic, token: asset.tokenAddress as Address });
    let minedIn: bigint | null = null;
    if (mining.mode !== 'paused') {
      const client = createPublicClient({ transport: rpcTransport(rpcUrl), pollingInterval: 100, cacheTime: 0 });
      const receipt = await client.waitForTransactionReceipt({ hash: sent.txHash, timeout: RECEIPT_TIMEOUT_MS });
      if (receipt.status !== 'success') throw new Error(`the transfer ${sent.txHash} reverted`);
      minedIn = receipt.blockNumber;
    }
    const scannerPoked = await pokeScanner(ctx, network.chainId);
    return {
      chainId: network.chainId,
      token: { symbol: asset.symbol, address: asset.tokenAddress },
      from: sent.from,
      to: to.address,
      amount: formatAtomic(amountAtomic, asset.decimals),
      amountAtomic: amountAtomic.toString(),
      txHash: sent.txHash,
      // Paused mining: the transfer waits in the mempool until `sandbox mine` or `sandbox resume-mining`.
      status: minedIn === null ? 'pending' : 'mined',
      blockNumber: minedIn === null ? null : Number(minedIn),
      scannerPoked,
    };
  });

  // The vault approval codes the sandbox outbox holds (no SMTP configured); sandbox accounts only.
  register('sandbox vault-codes', async (argv, ctx) => {
    const usage = 'usage: sandbox vault-codes --account <accountId> [--limit <n>]';
    const values = parse(argv, { account: { type: 'string' }, limit: { type: 'string' } }, usage);
    if (!values.account) throw new UsageError(`sandbox vault-codes needs --account\n${usage}`);
    const limit = positiveInt(values.limit, 'limit', 5);
    const opened = await openDatabase(ctx.config());
    try {
      return await sandboxVaultCodes(opened.db.prisma, values.account, limit);
    } finally {
      await opened.close();
    }
  });

  register('sandbox mine', async (argv, ctx) => {
    const values = parse(argv, { blocks: { type: 'string' } }, 'usage: sandbox mine [--blocks <n>]');
    const blocks = positiveInt(values.blocks, 'blocks', 1);
    const config = ctx.config();
    const { network, faults } = await sandboxChain(config);
    const head = await faults.mine(blocks);
    return { chainId: network.chainId, mined: blocks, head: block(head), scannerPoked: await pokeScanner(ctx, network.chainId) };
  });

  register('sandbox pause-mining', async (argv, ctx) => {
    parse(argv, {}, 'usage: sandbox pause-mining');
    const { network, faults } = await sandboxChain(ctx.config());
    await faults.pauseMining();
    return { chainId: network.chainId, mining: await faults.miningMode(), head: block(await faults.head()) };
  });

  register('sandbox resume-mining', async (argv, ctx) => {
    const values = parse(argv, { interval: { type: 'string' } }, 'usage: sandbox resume-mining [--interval <seconds>]');
    const interval = positiveInt(values.interval, 'interval', DEFAULT_INTERVAL_SECONDS, 0);
    const { network, faults } = await sandboxChain(ctx.config());
    const mining: MiningMode = await faults.resumeMining(interval === 0 ? {} : { intervalSeconds: interval });
    return { chainId: network.chainId, mining, head: block(await faults.head()) };
  });

  register('sandbox reorg', async (argv, ctx) => {
    const usage = 'usage: sandbox reorg --depth <n> [--reinclude]';
    const values = parse(argv, { depth: { type: 'string' }, reinclude: { type: 'boolean' } }, usage);
    if (values.depth === undefined) throw new UsageError(`sandbox reorg needs --depth\n${usage}`);
    const depth = positiveInt(values.depth, 'depth');
    const { network, faults } = await sandboxChain(ctx.config());
    const reorg = await faults.reorg(depth, { reincludeAll: values.reinclude === true });
    return {
      chainId: network.chainId,
      depth,
      replaced: reorg.replaced.map((r) => ({ number: Number(r.number), oldHash: r.oldHash, newHash: r.newHash })),
      head: block(reorg.head),
      // Without --reinclude the replaced blocks' transactions are gone, as if never sent.
      dropped: reorg.dropped,
      reincluded: reorg.included,
    };
  });
  registerFeeSpike(register);
}

/** `sandbox fee-spike`: a busy hour, the base fee held high for a while, then set back (ChainFaults.holdBaseFee). */
function registerFeeSpike(register: Register): void {
  register('sandbox fee-spike', async (argv, ctx) => {
    const usage = 'usage: sandbox fee-spike --gwei <decimal> --seconds <n>';
    const values = parse(argv, { gwei: { type: 'string' }, seconds: { type: 'string' } }, usage);
    if (!values.gwei || !values.seconds) throw new UsageError(`sandbox fee-spike needs --gwei and --seconds\n${usage}`);
    let baseFeeWei: bigint;
    try {
      baseFeeWei = toAtomic(values.gwei, 9);
    } catch (err) {
      throw new UsageError(`--gwei ${err instanceof Error ? err.message : String(err)}`);
    }
    if (baseFeeWei <= 0n) throw new UsageError('--gwei must be more than 0');
    const seconds = positiveInt(values.seconds, 'seconds');
    if (seconds > MAX_FEE_SPIKE_SECONDS) throw new UsageError(`--seconds must be at most ${MAX_FEE_SPIKE_SECONDS}`);
    const { network, faults } = await sandboxChain(ctx.config());
    const from = await faults.head();
    const hold = await faults.holdBaseFee(baseFeeWei);
    try {
      await new Promise((r) => setTimeout(r, seconds * 1000));
    } finally {
      await hold.release();
    }
    const to = await faults.head();
    return {
      chainId: network.chainId,
      heldGwei: formatAtomic(baseFeeWei, 9),
      baselineGwei: formatAtomic(hold.baselineWei, 9),
      seconds,
      blocks: Number(to.number - from.number),
      head: block(to),
    };
  });
}
