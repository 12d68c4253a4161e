import { randomUUID } from 'node:crypto';
import { otlpReceiver } from '../../test/support/otlp-receiver';
import type { BenchContext } from '../context';
import { latency, openLoop, showLatency, sleep } from '../measure';
import { breakdown } from '../trace-breakdown';

const SERVICE = 'bench-api-traced';
const EXPORT_WAIT_MS = 30_000;

/**
 * Where a create's time goes, from its traces: a second API process, tracing on and exporting to a
 * receiver here, takes `count` creates at half the maximum rate (the untraced figures above are
 * not measured with tracing's cost). Each create's request span gives its steps (`step.*`), its SQL
 * and the workflow start's RPC (src/platform/step-timing.ts, src/telemetry/tracing.ts).
 */
export async function createTracesPhase(ctx: BenchContext, count: number): Promise<void> {
  const { out, figures } = ctx;
  const rate = (figures.apiCreate?.perSecond ?? 0) / 2;
  if (!(rate > 0) || count <= 0) return;
  const receiver = await otlpReceiver();
  const api = await ctx.startApi({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_SERVICE_NAME: SERVICE,
    OTEL_BSP_SCHEDULE_DELAY: '200',
    // Every span of a burst kept: the default queue (2048) drops some at this rate.
    OTEL_BSP_MAX_QUEUE_SIZE: '100000',
  });
  let created = 0;
  try {
    await openLoop(count, rate, async () => {
      const res = await fetch(`${api.url}/v2/payments`, {
        method: 'POST',
        headers: { authorization: ctx.authorization, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: JSON.stringify(ctx.createBody),
      });
      await res.arrayBuffer();
      if (res.status === 201) created += 1;
      else if (res.status !== 503) throw new Error(`traced create answered ${res.status}`);
    });
  } finally {
    // Ends the process so its exporter sends what it buffered (the service flushes traces on SIGTERM).
    await api.stop();
  }
  const deadline = performance.now() + EXPORT_WAIT_MS;
  let b = breakdown(receiver.spans, SERVICE, 'POST /v2/payments', 201);
  while (b.requests < created && performance.now() < deadline) {
    await sleep(200);
    b = breakdown(receiver.spans, SERVICE, 'POST /v2/payments', 201);
  }
  await receiver.close();
  const parts = Object.fromEntries([...b.parts].map(([name, samples]) => [name, latency(samples)]));
  const statements = latency(b.statements);
  figures.createTraced = {
    ratePerSecond: Math.round(rate * 10) / 10,
    creates: b.requests,
    sqlStatementsPerCreate: statements.p50Ms,
    parts,
  };
  out(`where a create's time goes (traces of ${b.requests} of ${created} creates at ${rate.toFixed(1)}/s, a traced API process):`);
  for (const [name, l] of Object.entries(parts)) out(`  ${name.padEnd(28)} ${showLatency(l)}`);
  out(`  SQL statements per create    p50 ${statements.p50Ms}   max ${statements.maxMs}`);
}
