import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import Koa from 'koa';
import pg from 'pg';
import Router from '@koa/router';
import type { BenchContext } from '../context';
import { closedLoop, showLatency } from '../measure';
import { connectEngineProbes, type EngineProbes } from '../../src/temporal/probes';

/**
 * What the API is measured against, in the same run: a no-op Koa route, PostgreSQL's single-row
 * commit, a PaymentWorkflow start that the worker runs (the fair baseline) and a bare start no worker
 * takes.
 */
export async function ceilings(ctx: BenchContext, count: number, concurrency: number): Promise<void> {
  const { out, figures, service } = ctx;

  const app = new Koa();
  const router = new Router();
  router.get('/noop', (c) => {
    c.body = { ok: true };
  });
  app.use(router.routes());
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const port = (server.address() as { port: number }).port;
  try {
    figures.noopKoaRoute = await closedLoop(count, concurrency, async () => {
      await (await fetch(`http://127.0.0.1:${port}/noop`)).json();
    });
  } finally {
    await new Promise((r) => server.close(r));
  }
  out(`no-op Koa route:     ${figures.noopKoaRoute.perSecond}/s   ${showLatency(figures.noopKoaRoute.latency)}`);

  // As the schema's owner: the service's own logins may not create a table.
  const pool = new pg.Pool({ connectionString: service.database.url, max: concurrency });
  pool.on('error', () => undefined);
  await pool.query('CREATE TABLE IF NOT EXISTS bench_commits (id text PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())');
  try {
    figures.postgresSingleRowCommit = await closedLoop(count, concurrency, async () => {
      await pool.query('INSERT INTO bench_commits (id) VALUES ($1)', [randomUUID()]);
    });
  } finally {
    await pool.query('DROP TABLE bench_commits');
    await pool.end();
  }
  out(
    `PostgreSQL single-row commit: ${figures.postgresSingleRowCommit.perSecond}/s   ${showLatency(figures.postgresSingleRowCommit.latency)}`,
  );

  // A real Payment's workflow input under probe ids: the worker runs each one's first task (which
  // arms its expiry timer), as it does for an API create; the server closes them 30 s after their start.
  const probes = await connectEngineProbes({
    address: service.temporalAddress,
    namespace: service.config.temporal.namespace,
    taskQueue: service.config.temporal.taskQueue,
  });
  try {
    await engineStarts(ctx, probes, count, concurrency);
  } finally {
    await probes.close();
  }
}

async function engineStarts(ctx: BenchContext, probes: EngineProbes, count: number, concurrency: number): Promise<void> {
  const { out, figures, service } = ctx;
  const template = (await ctx.createPayment()).payment;
  const row = await service.database.db.prisma.payment.findUniqueOrThrow({ where: { id: template.id } });
  figures.paymentWorkflowStartWithWorker = await closedLoop(count, concurrency, async () => {
    await probes.startPaymentProbe({ ...row, id: `payment_benchprobe${randomUUID().replaceAll('-', '')}` }, ctx.network.confirmations);
  });
  out(
    `PaymentWorkflow start with the worker: ${figures.paymentWorkflowStartWithWorker.perSecond}/s   ${showLatency(figures.paymentWorkflowStartWithWorker.latency)}`,
  );

  figures.bareWorkflowStartWithoutWorker = await closedLoop(count, concurrency, async () => {
    await probes.startProbeWorkflow(`bench-noop-${randomUUID()}`);
  });
  out(
    `bare workflow.start, no worker: ${figures.bareWorkflowStartWithoutWorker.perSecond}/s   ${showLatency(figures.bareWorkflowStartWithoutWorker.latency)}`,
  );
}
