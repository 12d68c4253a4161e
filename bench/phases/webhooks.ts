import { randomUUID } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { archiveWebhookEndpoint, createWebhookEndpoint } from '../../src/domain/webhooks/endpoints';
import { resolveServiceSecret } from '../../src/runtime/service-secret';
import type { BenchContext } from '../context';
import { backlogFlat, type WebhookRunFigures } from '../figures';
import { latency, openLoop, showLatency, sleep } from '../measure';
import { cpuPerEvent, stackCpu } from '../stack-cpu';

/** How long events may still arrive after the last create; one that has not by then is counted lost. */
const STRAGGLER_MS = 30_000;
/** Untimed seconds of events before each run. */
const WARMUP_SECONDS = 5;
/** Seconds with no events, after the warm-up, to measure what the stack costs idle. */
const IDLE_SECONDS = 10;
/** The backlog (events committed, not yet delivered) is sampled this often during a run. */
const BACKLOG_EVERY_MS = 10_000;

/** A run this phase measured: every optional key of older runs present. */
type WebhookRun = WebhookRunFigures &
  Required<
    Pick<WebhookRunFigures, 'events' | 'undelivered' | 'stages' | 'p99Per10s' | 'cpuMsPerEvent' | 'idleCoresBusy' | 'backlog' | 'load'>
  >;

const loadAverage = () => Math.round(os.loadavg()[0]! * 100) / 100;

/**
 * Committed event -> webhook delivered: a receiver in this process, an endpoint of the bench app
 * subscribed to account.created, and accounts created through the API open-loop at `ratePerSecond`
 * for `seconds`. Accounts, not Payments: an account starts no workflow of its own, so the figure is
 * the webhook path's, not the Payment workflows' competing for the same dev server.
 * Each delivery is timed from its event's commit (the envelope's createdAt, the event row's
 * created_at) to its arrival here: the NOTIFY, the pickup, the dispatch pass, the delivery workflow
 * and the POST. The rows also split each delivery into stages (`stages`): event -> claimed by a
 * dispatch pass (dispatched_at), -> first attempt claimed inside the delivery workflow (the start,
 * its first task, the local activity), -> arrived (the POST).
 */
export async function webhooksPhase(ctx: BenchContext, ratePerSecond: number, seconds: number): Promise<void> {
  const run = await webhookRun(ctx, ratePerSecond, seconds);
  ctx.figures.committedEventToWebhookDelivered = run;
  ctx.out(
    `committed event -> webhook delivered (${run.events} events at ${ratePerSecond}/s for ${seconds} s after ${run.warmupEvents} untimed, load ${run.load.start} -> ${run.load.end}): ` +
      `${showLatency(run.latency)}   max ${run.latency.maxMs} ms   (target p99 <= 500 ms)`,
  );
  showRun(ctx, run);
}

/**
 * The sustained run (`webhooks-sustained`): the same path at `ratePerSecond` for `seconds` (50/s for
 * 5 min), with the backlog sampled every 10 s, so "no backlog growth" is the first third's mean
 * against the last third's.
 */
export async function webhooksSustainedPhase(ctx: BenchContext, ratePerSecond: number, seconds: number): Promise<void> {
  const run = await webhookRun(ctx, ratePerSecond, seconds);
  ctx.figures.webhooksSustained = run;
  ctx.out(
    `sustained: committed event -> webhook delivered (${run.events} events at ${ratePerSecond}/s for ${seconds} s after ${run.warmupEvents} untimed, load ${run.load.start} -> ${run.load.end}): ` +
      `${showLatency(run.latency)}   max ${run.latency.maxMs} ms   (target p99 <= 1000 ms, no backlog growth)`,
  );
  showRun(ctx, run);
}

function showRun(ctx: BenchContext, run: WebhookRun): void {
  const { out } = ctx;
  for (const [name, l] of Object.entries(run.stages)) out(`  ${name}: ${showLatency(l)}   max ${l.maxMs} ms`);
  out(
    `  CPU ms per event: ${Object.entries(run.cpuMsPerEvent)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}; idle, the stack keeps ${run.idleCoresBusy} cores busy`,
  );
  out(`  p99 per ${BACKLOG_EVERY_MS / 1000} s of commits: ${run.p99Per10s.join(' ')}`);
  out(`  backlog every ${BACKLOG_EVERY_MS / 1000} s: ${run.backlog.samples.map((s) => s.pending).join(' ')}`);
  out(
    `  backlog mean, first third ${run.backlog.firstThirdMean}, last third ${run.backlog.lastThirdMean} ` +
      `(${backlogFlat(run.backlog, run.ratePerSecond) ? 'no growth' : 'GROWING'}); load ${run.load.samples.join(' ')}`,
  );
  if (run.refused && Object.keys(run.refused).length > 0) out(`  creates refused (no event committed): ${JSON.stringify(run.refused)}`);
  out(`  events not delivered within ${STRAGGLER_MS / 1000} s: ${run.undelivered}`);
  if (run.undelivered > 0) process.exitCode = 1;
}

async function webhookRun(ctx: BenchContext, ratePerSecond: number, seconds: number): Promise<WebhookRun> {
  const { service } = ctx;
  const prisma = service.database.db.prisma;
  const arrivals = new Map<string, { ms: number; at: number }>();
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const receivedAt = Date.now();
      const envelope = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; createdAt: string };
      if (!arrivals.has(envelope.id)) arrivals.set(envelope.id, { ms: receivedAt - Date.parse(envelope.createdAt), at: receivedAt });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    const endpoint = await accountCreatedEndpoint(ctx, (receiver.address() as AddressInfo).port);
    // Untimed warm-up at the run's rate: the delivery path's Prisma plans, JIT and workflow code, so
    // the figure is the steady state, not the first seconds after the stack started.
    const warmup = await warmUp(ctx, ratePerSecond, () => arrivals.size);
    // What the stack costs with no events (the dispatcher's and the scanner's polls, the pools).
    const idleFrom = stackCpu(ctx);
    await sleep(IDLE_SECONDS * 1000);
    const idle = cpuPerEvent(idleFrom, stackCpu(ctx), 1, IDLE_SECONDS);
    const started = new Date();
    const cpuBefore = stackCpu(ctx);
    const load = { start: loadAverage(), end: 0, samples: [] as number[] };
    const count = Math.round(ratePerSecond * seconds);
    // A create the API refuses (503 at capacity) commits no event: counted, not timed.
    const refused = new Map<string, number>();
    // The backlog: this run's events committed and not yet delivered, from the rows.
    const samples: Array<{ atS: number; pending: number }> = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        await sleep(BACKLOG_EVERY_MS);
        if (!sampling) break;
        const [row] = await prisma.$queryRaw<Array<{ pending: bigint }>>`
          SELECT (SELECT count(*) FROM events WHERE app_id = ${ctx.appId} AND created_at >= ${started} AND dispatched_at IS NULL)
               + (SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = ${endpoint.id} AND status = 'pending') AS pending`;
        samples.push({ atS: Math.round((Date.now() - started.getTime()) / 1000), pending: Number(row!.pending) });
        load.samples.push(loadAverage());
      }
    })();
    await openLoop(count, ratePerSecond, async () => {
      await ctx.api('/v2/accounts', { body: { externalUserId: `bench-hook-${randomUUID()}` } }).catch((err: { status?: number }) => {
        const key = String(err.status ?? 'error');
        refused.set(key, (refused.get(key) ?? 0) + 1);
      });
    });
    sampling = false;
    await sampler;
    load.end = loadAverage();
    const expected = await prisma.event.findMany({
      where: { appId: ctx.appId, name: 'account.created', createdAt: { gte: started } },
      select: { id: true, createdAt: true, dispatchedAt: true },
    });
    const deadline = Date.now() + STRAGGLER_MS;
    while (expected.some((e) => !arrivals.has(e.id)) && Date.now() < deadline) await sleep(100);
    const cpu = cpuPerEvent(cpuBefore, stackCpu(ctx), expected.length, (Date.now() - started.getTime()) / 1000);
    const lost = expected.filter((e) => !arrivals.has(e.id)).length;
    const samplesMs = expected.flatMap((e) => (arrivals.has(e.id) ? [arrivals.get(e.id)!.ms] : []));
    const stages = await stageLatencies(ctx, endpoint.id, expected, arrivals);
    // p99 per 10 s of commits: a tail from one stall shows in one window, a growing one in the last.
    const windows: number[][] = [];
    for (const e of expected) {
      const arrived = arrivals.get(e.id);
      if (!arrived) continue;
      const w = Math.floor((e.createdAt.getTime() - started.getTime()) / BACKLOG_EVERY_MS);
      (windows[w] ??= []).push(arrived.ms);
    }
    const windowP99 = Array.from(windows, (xs) => (xs ? latency(xs).p99Ms : NaN));
    const third = Math.max(1, Math.floor(samples.length / 3));
    const mean = (xs: Array<{ pending: number }>) =>
      xs.length ? Math.round((xs.reduce((a, s) => a + s.pending, 0) / xs.length) * 10) / 10 : NaN;
    await archiveWebhookEndpoint(prisma, { endpointId: endpoint.id });
    return {
      ratePerSecond,
      seconds,
      warmupEvents: warmup,
      latency: latency(samplesMs),
      events: expected.length,
      undelivered: lost,
      stages,
      p99Per10s: windowP99,
      cpuMsPerEvent: cpu,
      idleCoresBusy: idle.coresBusy!,
      backlog: {
        everySeconds: BACKLOG_EVERY_MS / 1000,
        samples,
        firstThirdMean: mean(samples.slice(0, third)),
        lastThirdMean: mean(samples.slice(-third)),
      },
      load,
      ...(refused.size > 0 ? { refused: Object.fromEntries(refused) } : {}),
    };
  } finally {
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}

/**
 * An endpoint of the bench app subscribed to account.created, at a receiver of this process on `port`.
 * Through the domain with the in-process service: the API process refuses private destinations.
 */
export async function accountCreatedEndpoint(ctx: BenchContext, port: number) {
  const { service } = ctx;
  const { endpoint } = await createWebhookEndpoint(
    {
      prisma: service.database.db.prisma,
      serviceSecret: resolveServiceSecret(service.config.serviceSecret, service.dataDir),
      destinations: { allowPrivateDestinations: true },
    },
    ctx.appId,
    { url: `http://127.0.0.1:${port}/bench`, events: ['account.created'] },
  );
  return endpoint;
}

/** Creates WARMUP_SECONDS of accounts at `ratePerSecond` and waits (bounded) for their deliveries; answers how many. */
async function warmUp(ctx: BenchContext, ratePerSecond: number, delivered: () => number): Promise<number> {
  const count = Math.round(ratePerSecond * WARMUP_SECONDS);
  await openLoop(count, ratePerSecond, async () => {
    await ctx.api('/v2/accounts', { body: { externalUserId: `bench-hook-warmup-${randomUUID()}` } }).catch(() => undefined);
  });
  const deadline = Date.now() + STRAGGLER_MS;
  while (delivered() < count && Date.now() < deadline) await sleep(100);
  return count;
}

/** Each delivered event's path in three stages, from its rows (clocks: PostgreSQL's and this process's, one machine). */
async function stageLatencies(
  ctx: BenchContext,
  endpointId: string,
  events: Array<{ id: string; createdAt: Date; dispatchedAt: Date | null }>,
  arrivals: Map<string, { ms: number; at: number }>,
): Promise<WebhookRun['stages']> {
  const attempts = await ctx.service.database.db.prisma.$queryRaw<Array<{ event_id: string; claimed_at: Date }>>`
    SELECT d.event_id, a.claimed_at FROM webhook_deliveries d
    JOIN webhook_attempts a ON a.delivery_id = d.id AND a.round = d.round AND a.attempt = 1
    WHERE d.endpoint_id = ${endpointId}`;
  const claimed = new Map(attempts.map((a) => [a.event_id, a.claimed_at.getTime()]));
  const pickup: number[] = [];
  const start: number[] = [];
  const post: number[] = [];
  for (const e of events) {
    const arrived = arrivals.get(e.id);
    const attempt = claimed.get(e.id);
    if (!arrived || attempt === undefined || !e.dispatchedAt) continue;
    pickup.push(e.dispatchedAt.getTime() - e.createdAt.getTime());
    start.push(attempt - e.dispatchedAt.getTime());
    post.push(arrived.at - attempt);
  }
  return {
    'event -> dispatch pass claimed it': latency(pickup),
    'dispatch pass -> first attempt started': latency(start),
    'first attempt -> arrived': latency(post),
  };
}
