import type Router from '@koa/router';
import type { ApiState } from '../context';
import { OPENAPI_PATH, partnersOpenApi, type OpenApiOptions } from '../openapi/document';

/** GET /v2/openapi/partners.json: public (a developer generates a client before holding credentials). */
export function registerOpenApiRoutes(router: Router<ApiState>, options: OpenApiOptions): void {
  // Built now, at start: a schema the generator can't describe fails the start, not a request.
  const body = JSON.stringify(partnersOpenApi(options));
  router.get(OPENAPI_PATH, (ctx) => {
    ctx.type = 'application/json; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = body;
  });
}
