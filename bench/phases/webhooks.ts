import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { archiveWebhookEndpoint, createWebhookEndpoint } from '../../src/domain/webhooks/endpoints';
import { resolveServiceSecret } from '../../src/runtime/service-secret';
import type { BenchContext } from '../context';
import { latency, openLoop, showLatency, sleep } from '../measure';

/** How long events may still arrive after the last create; one that has not by then is counted lost. */
const STRAGGLER_MS = 30_000;

/**
 * Committed event -> webhook delivered: a receiver in this process, an endpoint of the bench app
 * subscribed to account.created, and accounts created through the API open-loop at `ratePerSecond`
 * for `seconds`. Accounts, not Payments: an account starts no workflow of its own, so the figure is
 * the webhook path's, not the Payment workflows' competing for the same dev server.
 * Each delivery is timed from its event's commit (the envelope's createdAt, the event row's
 * created_at) to its arrival here: the NOTIFY, the kick, the dispatch pass, the delivery workflow
 * and the POST.
 */
export async function webhooksPhase(ctx: BenchContext, ratePerSecond: number, seconds: number): Promise<void> {
  const { service, out, figures } = ctx;
  const arrivals = new Map<string, number>();
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const receivedAt = Date.now();
      const envelope = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; createdAt: string };
      if (!arrivals.has(envelope.id)) arrivals.set(envelope.id, receivedAt - Date.parse(envelope.createdAt));
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = receiver.address() as AddressInfo;
    // Through the domain with the in-process service: the API process refuses private destinations.
    const { endpoint } = await createWebhookEndpoint(
      {
        prisma: service.database.db.prisma,
        serviceSecret: resolveServiceSecret(service.config.serviceSecret, service.dataDir),
        destinations: { allowPrivateDestinations: true },
      },
      ctx.appId,
      { url: `http://127.0.0.1:${port}/bench`, events: ['account.created'] },
    );
    const started = new Date();
    const count = Math.round(ratePerSecond * seconds);
    // A create the API refuses (503 at capacity) commits no event: counted, not timed.
    const refused = new Map<string, number>();
    await openLoop(count, ratePerSecond, async () => {
      await ctx.api('/v2/accounts', { body: { externalUserId: `bench-hook-${randomUUID()}` } }).catch((err: { status?: number }) => {
        const key = String(err.status ?? 'error');
        refused.set(key, (refused.get(key) ?? 0) + 1);
      });
    });
    const expected = await service.database.db.prisma.event.findMany({
      where: { appId: ctx.appId, name: 'account.created', createdAt: { gte: started } },
      select: { id: true },
    });
    const deadline = Date.now() + STRAGGLER_MS;
    while (expected.some((e) => !arrivals.has(e.id)) && Date.now() < deadline) await sleep(100);
    const lost = expected.filter((e) => !arrivals.has(e.id)).length;
    const samples = expected.flatMap((e) => (arrivals.has(e.id) ? [arrivals.get(e.id)!] : []));
    figures.committedEventToWebhookDelivered = { ratePerSecond, seconds, latency: latency(samples), events: expected.length, undelivered: lost };
    out(
      `committed event -> webhook delivered (${expected.length} events at ${ratePerSecond}/s for ${seconds} s): ` +
        `${showLatency(figures.committedEventToWebhookDelivered.latency)}   (target p99 <= 500 ms)`,
    );
    if (refused.size > 0) out(`  creates refused (no event committed): ${JSON.stringify(Object.fromEntries(refused))}`);
    out(`  events not delivered within ${STRAGGLER_MS / 1000} s: ${lost}`);
    if (lost > 0) process.exitCode = 1;
    await archiveWebhookEndpoint(service.database.db.prisma, { endpointId: endpoint.id });
  } finally {
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}
