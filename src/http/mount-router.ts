import type Koa from 'koa';
import type Router from '@koa/router';
import type { ApiContext, ApiState } from './context';
import { ApiError } from '../domain/requests/errors';

/**
 * Mounts a router on the app. A method a known path does not serve (a standard one, or one no route
 * implements, such as TRACE) is 405 in the error envelope with the path's methods in `Allow` (RFC 9110
 * requires it) and in details.allowedMethods. @koa/router works out the methods (`throw: false`, so it
 * sets Allow); a path nothing serves stays a 404.
 */
export function mountRouter(app: Koa<ApiState>, router: Router<ApiState>): void {
  app.use(router.routes());
  const allowedMethods = router.allowedMethods();
  app.use(async (ctx, next) => {
    await allowedMethods(ctx as ApiContext, next);
    if (ctx.status !== 405 && ctx.status !== 501) return;
    const allowed = (ctx.response.get('Allow') || '')
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean);
    ctx.remove('Allow');
    if (allowed.length === 0) {
      ctx.status = 404;
      return;
    }
    throw new ApiError(
      'method_not_allowed',
      `${ctx.method.slice(0, 16)} is not allowed here; allowed: ${allowed.join(', ')}`,
      { allowedMethods: allowed },
      { Allow: allowed.join(', ') },
    );
  });
}
