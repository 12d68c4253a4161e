import type Router from '@koa/router';
import type { PrismaClient } from '../../db/client';
import type { ApiState } from '../context';

export interface HealthProbe {
  (): Promise<void>;
}

async function probe(check: HealthProbe, timeoutMs: number): Promise<{ ok: boolean; latencyMs: number; error?: string }> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), timeoutMs);
      }),
    ]);
    return { ok: true, latencyMs: Date.now() - started };
  } catch (err) {
    // Only a short reason: connection strings and hosts stay out of the public answer.
    const reason = err instanceof Error && err.message === 'timed out' ? 'timeout' : 'unreachable';
    return { ok: false, latencyMs: Date.now() - started, error: reason };
  } finally {
    clearTimeout(timer);
  }
}

/** GET /healthz: 200 when PostgreSQL and Temporal both answer, 503 otherwise. No authentication. */
export function registerHealthRoutes(
  router: Router<ApiState>,
  deps: { prisma: PrismaClient; temporalHealth: HealthProbe; timeoutMs?: number },
): void {
  router.get('/healthz', async (ctx) => {
    const timeoutMs = deps.timeoutMs ?? 2000;
    const [postgres, temporal] = await Promise.all([
      probe(async () => {
        await deps.prisma.$queryRaw`SELECT 1`;
      }, timeoutMs),
      probe(deps.temporalHealth, timeoutMs),
    ]);
    const ok = postgres.ok && temporal.ok;
    ctx.status = ok ? 200 : 503;
    // A 503 says when to ask again, as every 503 of the service does.
    if (!ok) ctx.set('Retry-After', '5');
    ctx.body = { status: ok ? 'ok' : 'unavailable', checks: { postgres, temporal } };
  });
}
