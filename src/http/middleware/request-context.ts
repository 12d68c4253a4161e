import { randomUUID } from 'node:crypto';
import type { Logger } from '../../logger';
import type { ApiMiddleware } from '../context';
import { collectSteps, serverTimingHeader } from '../../platform/step-timing';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Gives each request an id (echoed as X-Request-Id) and logs one structured line when it ends. With
 * `serverTiming`, the answer carries its steps' durations as a `Server-Timing` header.
 */
export function requestContext(logger: Logger, options: { serverTiming?: boolean } = {}): ApiMiddleware {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : `req_${randomUUID()}`;
    ctx.state.requestId = requestId;
    ctx.state.log = logger.child({ requestId });
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    const elapsedMs = () => Number(process.hrtime.bigint() - started) / 1e6;
    try {
      if (options.serverTiming) await collectSteps(next, (steps) => ctx.set('Server-Timing', serverTimingHeader(steps, elapsedMs())));
      else await next();
    } finally {
      const ms = elapsedMs();
      ctx.state.log.info(
        {
          req: { method: ctx.method, path: ctx.path, headers: ctx.headers },
          status: ctx.status,
          appId: ctx.state.app?.id,
          durationMs: Math.round(ms * 100) / 100,
        },
        'request',
      );
    }
  };
}
