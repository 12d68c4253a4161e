import type Koa from 'koa';
import type Router from '@koa/router';
import type { ApiState } from './context';
import { ApiError } from '../domain/errors';

/** Mounts a router on the app, answering a wrong method on a known path in the error envelope (405). */
export function mountRouter(app: Koa<ApiState>, router: Router<ApiState>): void {
  app.use(router.routes());
  app.use(
    router.allowedMethods({
      throw: true,
      methodNotAllowed: () => new ApiError('method_not_allowed', 'Method not allowed on this resource'),
      notImplemented: () => new ApiError('method_not_allowed', 'Method not implemented'),
    }),
  );
}
