import getRawBody from 'raw-body';
import { ApiError } from '../domain/requests/errors';
import type { ApiContext, ApiMiddleware } from './context';

/**
 * What the server-rendered areas behind a session (the operator console, the partner dashboard) share:
 * strict headers (no script at all, styles from the service only, no framing, forms post only here),
 * their forms' bodies, and errors answered as pages, never the JSON envelope.
 */
export const HTML_AREA_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The one exception (docs/decisions/dashboard-and-console.md, "Live finality bars"): a page that
 * follows something live runs the one script tag carrying this answer's nonce (no other script, inline
 * or from anywhere), which may only call back to this origin. Every other page keeps HTML_AREA_CSP.
 */
export function htmlAreaCspWithScript(nonce: string): string {
  if (!/^[A-Za-z0-9+/_-]{16,}={0,2}$/.test(nonce)) throw new Error('a script nonce is at least 16 base64 characters');
  return `${HTML_AREA_CSP}; script-src 'nonce-${nonce}'; connect-src 'self'`;
}

export const HTML_AREA_HEADERS = {
  'Content-Security-Policy': HTML_AREA_CSP,
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
};

const FORM_BYTES = 16 * 1024;

/** An application/x-www-form-urlencoded body (repeated fields kept: `getAll`). */
export async function readForm(ctx: ApiContext): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded'))
    throw new ApiError('unsupported_media_type', 'Forms are sent as application/x-www-form-urlencoded');
  try {
    return new URLSearchParams(await getRawBody(ctx.req, { limit: FORM_BYTES, encoding: 'utf-8' }));
  } catch {
    throw new ApiError('payload_too_large', `A form is at most ${FORM_BYTES} bytes`);
  }
}

/** A refusal in words for the page: its fields' problems, else its message; never an internal error's text. */
export function problemOf(err: unknown): string {
  if (err instanceof ApiError) {
    const fields = (err.details as { fields?: Array<{ field: string; message: string }> } | undefined)?.fields;
    return fields?.length ? fields.map((f) => `${f.field.replace(/^body\./, '')}: ${f.message}`).join('; ') : err.message;
  }
  return 'Something went wrong on our side: try again in a moment.';
}

/** The area's headers on every answer, and any error as a page by `render` (a 5xx logged as `area`'s). */
export function htmlAreaGuard(
  area: string,
  render: (ctx: ApiContext, status: number, problem: string) => Promise<void> | void,
): ApiMiddleware {
  return async (ctx, next) => {
    ctx.set(HTML_AREA_HEADERS);
    try {
      await next();
    } catch (err) {
      const status = err instanceof ApiError ? err.status : 500;
      if (status >= 500) ctx.state.log.error({ err }, `${area} request failed`);
      await render(ctx, status, problemOf(err));
    }
  };
}
