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

interface HealthReport {
  ok: boolean;
  checks: { postgres: ProbeResult; temporal: ProbeResult };
}
type ProbeResult = Awaited<ReturnType<typeof probe>>;

/**
 * `run`'s last result while it started less than `freshMs` ago, else a new run; callers that come
 * while one runs share it. Lazy: nothing runs between requests (no timer of its own).
 */
export function singleFlight<T>(run: () => Promise<T>, freshMs: number): () => Promise<T> {
  let last: { startedAt: number; value: T } | undefined;
  let flight: Promise<T> | undefined;
  return () => {
    if (last && Date.now() - last.startedAt < freshMs) return Promise.resolve(last.value);
    if (!flight) {
      const startedAt = Date.now();
      flight = run()
        .then((value) => {
          last = { startedAt, value };
          return value;
        })
        .finally(() => {
          flight = undefined;
        });
    }
    return flight;
  };
}

/**
 * GET /healthz: 200 when PostgreSQL and Temporal both answered a probe started within the last
 * `probeIntervalMs`, 503 otherwise. No authentication, so the probe is shared: at most one starts
 * per interval however many ask (a load balancer's checks cost the database nothing more).
 */
export function registerHealthRoutes(
  router: Router<ApiState>,
  deps: { prisma: PrismaClient; temporalHealth: HealthProbe; timeoutMs?: number; probeIntervalMs: number },
): void {
  const timeoutMs = deps.timeoutMs ?? 2000;
  const report = singleFlight(async (): Promise<HealthReport> => {
    const [postgres, temporal] = await Promise.all([
      probe(async () => {
        await deps.prisma.$queryRaw`SELECT 1`;
      }, timeoutMs),
      probe(deps.temporalHealth, timeoutMs),
    ]);
    return { ok: postgres.ok && temporal.ok, checks: { postgres, temporal } };
  }, deps.probeIntervalMs);

  router.get('/healthz', async (ctx) => {
    const { ok, checks } = await report();
    ctx.status = ok ? 200 : 503;
    // A 503 says when to ask again, as every 503 of the service does.
    if (!ok) ctx.set('Retry-After', '5');
    ctx.body = { status: ok ? 'ok' : 'unavailable', checks };
  });
}
