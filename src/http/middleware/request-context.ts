import { randomUUID } from 'node:crypto';
import type { Logger } from '../../logger';
import type { ApiMiddleware } from '../context';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Gives each request an id (echoed as X-Request-Id) and logs one structured line when it ends. */
export function requestContext(logger: Logger): ApiMiddleware {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : `req_${randomUUID()}`;
    ctx.state.requestId = requestId;
    ctx.state.log = logger.child({ requestId });
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
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
