import { randomUUID } from 'node:crypto';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import type { Address } from 'viem';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/logger';
import { startService } from '../src/runtime/service';
import { Lifecycle } from '../src/runtime/lifecycle';
import { createApp } from '../src/domain/apps';
import { fundTestWallet, SANDBOX_TOKEN_ADDRESS } from '../src/chain/sandbox';

/**
 * `npm run bench`: figures for the README, against the embedded defaults (dev server on SQLite,
 * local PostgreSQL, anvil). Prints; asserts nothing.
 *   BENCH_COUNT (default 2000) receive Payments created through the API, the same count of bare
 *   client.workflow.start calls, create latency at half the measured maximum rate, and
 *   BENCH_SETTLE (default 40) Payments timed from a confirmed transfer to `succeeded`, then an
 *   overload phase: creates at twice the measured maximum rate for BENCH_OVERLOAD_SECONDS (default
 *   15), which prints the share of each answer and p99 latency, and checks (the one check here, in the
 *   output and the exit code) that no request hung or answered 500.
 */
const COUNT = Number(process.env.BENCH_COUNT ?? 2000);
const SETTLE = Number(process.env.BENCH_SETTLE ?? 40);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const OVERLOAD_SECONDS = Number(process.env.BENCH_OVERLOAD_SECONDS ?? 15);
/** A request still unanswered after this counts as hung (the client gives up on it). */
const HANG_MS = 30_000;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function summary(latencies: number[]) {
  const s = [...latencies].sort((a, b) => a - b);
  return { p50: percentile(s, 50).toFixed(1), p99: percentile(s, 99).toFixed(1) };
}

async function closedLoop(count: number, concurrency: number, op: (i: number) => Promise<void>) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const t0 = performance.now();
        await op(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { perSecond: count / seconds, latencies };
}

async function openLoop(count: number, ratePerSecond: number, op: (i: number) => Promise<void>) {
  const latencies: number[] = [];
  const interval = 1000 / ratePerSecond;
  const started = performance.now();
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < count; i += 1) {
    const due = started + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inflight.push(
      (async () => {
        const t0 = performance.now();
        await op(i);
        latencies.push(performance.now() - t0);
      })(),
    );
  }
  await Promise.all(inflight);
  return latencies;
}

interface Answer {
  status: number;
  code?: string;
  retryAfter: string | null;
}

/**
 * Open-loop creates at `rate` for `seconds`: every request gets HANG_MS to answer. Counts each
 * answer by status and error code, a 503 without Retry-After apart, and the hung and the failed.
 */
async function overload(rate: number, seconds: number, send: (signal: AbortSignal) => Promise<Answer>) {
  const count = Math.max(1, Math.round(rate * seconds));
  const outcomes = new Map<string, number>();
  const note = (key: string) => outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
  const latencies = await openLoop(count, rate, async () => {
    try {
      const a = await send(AbortSignal.timeout(HANG_MS));
      note(a.code ? `${a.status} ${a.code}` : String(a.status));
      if (a.status === 503 && !(Number(a.retryAfter) >= 1)) note('503 without Retry-After');
    } catch (err) {
      note(err instanceof Error && err.name === 'TimeoutError' ? 'hung' : 'connection failed');
    }
  });
  const bad = [...outcomes].filter(([k]) => k === 'hung' || k === 'connection failed' || k.startsWith('500') || k === '503 without Retry-After');
  return { count, seconds, outcomes, latencies, bad, passed: bad.length === 0 };
}

function overloadReport(r: Awaited<ReturnType<typeof overload>>, rate: number): string[] {
  const share = (n: number) => `${((100 * n) / r.count).toFixed(1)}%`;
  const withStatus = (prefix: string) => [...r.outcomes].filter(([k]) => k.startsWith(prefix)).reduce((n, [, v]) => n + v, 0);
  const lat = summary(r.latencies);
  const max = Math.max(...r.latencies).toFixed(1);
  const detail = [...r.outcomes].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k}: ${v} (${share(v)})`).join(', ');
  return [
    `overload at ${rate.toFixed(1)}/s (2x max) for ${r.seconds} s, ${r.count} creates: 429 ${share(withStatus('429'))}, 503 ${share(withStatus('503'))}   p50 ${lat.p50} ms   p99 ${lat.p99} ms   max ${max} ms`,
    `  answers: ${detail}`,
    r.passed
      ? `overload check: PASS (every request answered within ${HANG_MS / 1000} s, none 500, every 503 with Retry-After)`
      : `overload check: FAIL (${r.bad.map(([k, v]) => `${k}: ${v}`).join(', ')})`,
  ];
}

async function main(): Promise<void> {
  const config = loadConfig({
    ...process.env,
    LOG_LEVEL: 'warn',
    PORT: process.env.BENCH_PORT ?? '3100',
    EMBEDDED_ANVIL_PORT: process.env.BENCH_ANVIL_PORT ?? '8645',
    RATE_LIMIT_POINTS: '1000000',
    API_DATABASE_POOL_MAX: process.env.API_DATABASE_POOL_MAX ?? '20',
    WORKER_DATABASE_POOL_MAX: process.env.WORKER_DATABASE_POOL_MAX ?? '20',
  });
  const logger = createLogger('warn');
  // Ctrl-C stops the bench's own stack like `npm start` stops its one (src/runtime/lifecycle.ts).
  const lifecycle = new Lifecycle();
  lifecycle.stopOnSignals((line) => process.stdout.write(`bench: ${line}\n`));
  const service = await startService({ config, logger, roles: ['api', 'worker'], scannerPollSeconds: 1, sandboxBlockTime: 0, lifecycle });
  const out = (line: string) => process.stdout.write(`${line}\n`);
  try {
    const base = service.apiUrl!;
    const network = service.environments.environments.sandbox.networks[0]!;
    const cred = await createApp(service.database.db.prisma, { name: 'bench', environment: 'sandbox' }, service.environments.apiVersion);
    const auth = `Basic ${Buffer.from(`${cred.appId}:${cred.appSecret}`).toString('base64')}`;
    const api = async (path: string, init: { method?: string; body?: unknown; key?: string } = {}) => {
      const res = await fetch(`${base}${path}`, {
        method: init.method ?? (init.body ? 'POST' : 'GET'),
        headers: { authorization: auth, 'content-type': 'application/json', ...(init.key ? { 'idempotency-key': init.key } : {}) },
        body: init.body ? JSON.stringify(init.body) : undefined,
      });
      const body = (await res.json()) as any;
      if (res.status >= 300) throw Object.assign(new Error(`${path}: ${res.status} ${JSON.stringify(body)}`), { status: res.status });
      return body;
    };
    const account = await api('/v2/accounts', { body: { externalUserId: `bench-${randomUUID()}` } });
    const accountId = account.account.id as string;
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    const withWallet = await api(`/v2/accounts/${accountId}/connected-wallets`, { body: { chainId: network.chainId, address: wallet } });
    await api(`/v2/accounts/${accountId}/settlement-profile`, { method: 'PUT', body: { connectedWalletId: withWallet.connectedWallets[0].id } });
    const createBody = { intent: 'receive', amount: '1', assetCode: 'USDC', chainId: network.chainId, destination: { type: 'upa', accountId } };
    const create = async () => api('/v2/payments', { body: createBody, key: randomUUID() });
    // In the timed phases a 503 (the service refusing load, with Retry-After) is counted, not fatal.
    let refused = 0;
    const timedCreate = async () => {
      try {
        await create();
      } catch (err) {
        if ((err as { status?: number }).status !== 503) throw err;
        refused += 1;
      }
    };
    const refusedNote = () => {
      const note = refused ? `   (${refused} refused with 503)` : '';
      refused = 0;
      return note;
    };

    // Warm up the connection pools, the Prisma plans and the workflow cache.
    await closedLoop(50, 8, async () => void (await create()));

    let maxCreateRate: number | undefined;
    out(`# Partner Payments benchmark (${new Date().toISOString()}), ${COUNT} Payments, concurrency ${CONCURRENCY}`);
    if (process.env.BENCH_ONLY !== 'settle') {
    const apiRun = await closedLoop(COUNT, CONCURRENCY, timedCreate);
    const apiLat = summary(apiRun.latencies);
    out(`API create:        ${apiRun.perSecond.toFixed(1)}/s   p50 ${apiLat.p50} ms   p99 ${apiLat.p99} ms${refusedNote()}`);
    maxCreateRate = apiRun.perSecond;

    const bare = await closedLoop(COUNT, CONCURRENCY, async () => {
      await service.engine.startProbeWorkflow(`bench-noop-${randomUUID()}`);
    });
    const bareLat = summary(bare.latencies);
    out(`bare workflow.start: ${bare.perSecond.toFixed(1)}/s   p50 ${bareLat.p50} ms   p99 ${bareLat.p99} ms`);
    out(`ratio API / bare:  ${(apiRun.perSecond / bare.perSecond).toFixed(2)}   (target >= 0.80)`);

    const halfRate = apiRun.perSecond / 2;
    const halfCount = Math.min(COUNT, Math.max(200, Math.round(halfRate * 10)));
    const half = summary(await openLoop(halfCount, halfRate, timedCreate));
    out(`API create at ${halfRate.toFixed(1)}/s (half max), ${halfCount} requests: p50 ${half.p50} ms   p99 ${half.p99} ms   (target p99 < 50 ms)${refusedNote()}`);
    }

    // Confirmed transfer -> succeeded. A miner keeps blocks coming so settlements confirm.
    const rpc = service.rpcUrl!;
    const chain = service.chain.chains.get(network.chainId);
    const mine = async (n: number) => {
      // A dropped keep-alive connection to anvil only costs one block.
      await fetch(rpc, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: [`0x${n.toString(16)}`] }) }).catch(() => undefined);
    };
    const payer = privateKeyToAccount(generatePrivateKey());
    await fundTestWallet({ rpcUrl: rpc, address: payer.address, tokenAtomic: BigInt(SETTLE) * 1_000_000n, nativeWei: 10n ** 18n });
    let mining = true;
    const miner = (async () => {
      while (mining) {
        await mine(1);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const settleLatencies: number[] = [];
    const poke = () => service.engine.pokeChainScanner(network.chainId);
    for (let i = 0; i < SETTLE; i += 1) {
      const created = await create();
      const p = created.payment;
      const hash = await chain.sendTokenTransfer({ from: payer, token: SANDBOX_TOKEN_ADDRESS, to: p.funding.depositAddress.address as Address, amountAtomic: 1_000_000n });
      await poke();
      // "Confirmed": the transfer is at the configured depth.
      while ((await chain.getTransactionStatus(hash, network.confirmations)) !== 'confirmed') await new Promise((r) => setTimeout(r, 10));
      const t0 = performance.now();
      for (;;) {
        const row = await service.database.db.prisma.payment.findUnique({ where: { id: p.id }, select: { status: true } });
        if (row?.status === 'succeeded') break;
        await new Promise((r) => setTimeout(r, 10));
      }
      settleLatencies.push(performance.now() - t0);
    }
    mining = false;
    await miner;
    const settle = summary(settleLatencies);
    out(`confirmed transfer -> succeeded (${SETTLE} Payments): p50 ${settle.p50} ms   p99 ${settle.p99} ms   (target p99 < 1000 ms)`);

    // Last, so its backlog of workflows can't slow the phases above.
    if (maxCreateRate !== undefined && OVERLOAD_SECONDS > 0) {
      const rate = 2 * maxCreateRate;
      const result = await overload(rate, OVERLOAD_SECONDS, async (signal) => {
        const res = await fetch(`${base}/v2/payments`, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
          body: JSON.stringify(createBody),
          signal,
        });
        const body = (await res.json().catch(() => ({}))) as any;
        return { status: res.status, code: body?.error?.code as string | undefined, retryAfter: res.headers.get('retry-after') };
      });
      for (const line of overloadReport(result, rate)) out(line);
      if (!result.passed) process.exitCode = 1;
    }
  } finally {
    await service.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
