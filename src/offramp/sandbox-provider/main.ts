import { z } from 'zod';
import type { Address, Hex } from 'viem';
import { createLogger } from '../../logger';
import { READY_PREFIX } from './contract';
import { createProviderWallet, loadOrCreateProviderKey } from './chain';
import { createSandboxProviderServer } from './server';
import { ProviderStore } from './store';

/**
 * The sandbox provider's own process (started by `npm start` and the test harness through
 * launch.ts). Its settings come from its environment, parsed once here: it is a separate program
 * playing an outside provider, not part of the service's configuration.
 */
const ZProviderEnv = z.object({
  SANDBOX_PROVIDER_PORT: z.coerce.number().int().min(0).max(65535),
  SANDBOX_PROVIDER_HOST: z.string().default('127.0.0.1'),
  SANDBOX_PROVIDER_DATA_DIR: z.string().min(1),
  SANDBOX_PROVIDER_RPC_URL: z.url(),
  SANDBOX_PROVIDER_CHAIN_ID: z.coerce.number().int().positive().default(31337),
  /** The stablecoin it takes (launch.ts passes the sandbox token's address). */
  SANDBOX_PROVIDER_TOKEN_ADDRESS: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
  /** An anvil dev key to use instead of the key made under the data dir. */
  SANDBOX_PROVIDER_PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/)
    .optional(),
  SANDBOX_PROVIDER_CALLBACK_URL: z.url().optional(),
  OFFRAMP_CALLBACK_SECRET: z.string().min(16),
  SANDBOX_PROVIDER_QUOTE_TTL_SECONDS: z.coerce.number().int().min(1).default(900),
  SANDBOX_PROVIDER_STEP_MS: z.coerce.number().int().min(0).default(2000),
  SANDBOX_PROVIDER_VERIFY_DELAY_MS: z.coerce.number().int().min(0).default(2000),
  SANDBOX_PROVIDER_HANG_MS: z.coerce.number().int().min(0).default(10_000),
  SANDBOX_PROVIDER_RETURN_AFTER_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .default(3 * 24 * 3600),
  SANDBOX_PROVIDER_CALLBACK_ATTEMPTS: z.coerce.number().int().min(1).default(6),
  SANDBOX_PROVIDER_CALLBACK_BACKOFF_MS: z.coerce.number().int().min(1).default(500),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

async function main(): Promise<void> {
  const parsed = ZProviderEnv.safeParse(process.env);
  if (!parsed.success) {
    throw new Error(
      `sandbox provider: invalid configuration: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  const e = parsed.data;
  const logger = createLogger(e.LOG_LEVEL);
  const store = new ProviderStore(e.SANDBOX_PROVIDER_DATA_DIR);
  const wallet = createProviderWallet({
    rpcUrl: e.SANDBOX_PROVIDER_RPC_URL,
    privateKey: loadOrCreateProviderKey(e.SANDBOX_PROVIDER_DATA_DIR, e.SANDBOX_PROVIDER_PRIVATE_KEY) as Hex,
  });
  const provider = createSandboxProviderServer({
    store,
    wallet,
    logger,
    chainId: e.SANDBOX_PROVIDER_CHAIN_ID,
    tokenAddress: e.SANDBOX_PROVIDER_TOKEN_ADDRESS as Address,
    callbackUrl: e.SANDBOX_PROVIDER_CALLBACK_URL,
    callbackSecret: e.OFFRAMP_CALLBACK_SECRET,
    quoteTtlSeconds: e.SANDBOX_PROVIDER_QUOTE_TTL_SECONDS,
    stepMs: e.SANDBOX_PROVIDER_STEP_MS,
    verifyDelayMs: e.SANDBOX_PROVIDER_VERIFY_DELAY_MS,
    hangMs: e.SANDBOX_PROVIDER_HANG_MS,
    returnAfterSeconds: e.SANDBOX_PROVIDER_RETURN_AFTER_SECONDS,
    callbackAttempts: e.SANDBOX_PROVIDER_CALLBACK_ATTEMPTS,
    callbackBackoffMs: e.SANDBOX_PROVIDER_CALLBACK_BACKOFF_MS,
  });
  await new Promise<void>((resolve, reject) => {
    provider.server.once('error', reject);
    provider.server.listen(e.SANDBOX_PROVIDER_PORT, e.SANDBOX_PROVIDER_HOST, () => resolve());
  });
  provider.resume();
  const { port } = provider.server.address() as { port: number };
  process.stdout.write(`${READY_PREFIX}${JSON.stringify({ url: `http://${e.SANDBOX_PROVIDER_HOST}:${port}`, address: wallet.address })}\n`);
  const stop = () => {
    void provider.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
