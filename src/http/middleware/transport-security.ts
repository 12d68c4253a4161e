import type { ApiMiddleware } from '../context';

/** Two years, the preload list's minimum; subdomains too, as the API's host serves nothing over http. */
export const HSTS = 'max-age=63072000; includeSubDomains';

/**
 * Strict-Transport-Security on every answer when the public URL is https (TLS ends at a proxy in
 * front): a browser that reached the API once never tries it over plain http again, so the dashboard's
 * and console's cookies can't be read off a downgraded hop. Nothing over http (the sandbox, tests).
 */
export function transportSecurity(publicBaseUrl: string): ApiMiddleware {
  const https = new URL(publicBaseUrl).protocol === 'https:';
  return async (ctx, next) => {
    if (https) ctx.set('Strict-Transport-Security', HSTS);
    await next();
  };
}
