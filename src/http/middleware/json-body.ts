import getRawBody from 'raw-body';
import type { ApiMiddleware } from '../context';
import { ApiError } from '../../domain/requests/errors';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/** Reads the raw bytes (kept for idempotency) and parses JSON; anything else is refused in the envelope. */
export function jsonBody(maxBytes: number): ApiMiddleware {
  return async (ctx, next) => {
    if (!METHODS_WITH_BODY.has(ctx.method)) return next();
    const declared = Number(ctx.get('Content-Length') || '0');
    if (declared > maxBytes) throw tooLarge(maxBytes);
    let raw: Buffer;
    try {
      raw = await getRawBody(ctx.req, { limit: maxBytes });
    } catch (err) {
      if ((err as { type?: string }).type === 'entity.too.large') throw tooLarge(maxBytes);
      throw new ApiError('bad_request', 'Could not read the request body');
    }
    ctx.state.rawBody = raw;
    if (raw.length === 0) {
      ctx.state.body = {};
      return next();
    }
    if (!ctx.is('application/json')) {
      throw new ApiError('unsupported_media_type', 'Request body must be sent as Content-Type: application/json');
    }
    let text: string;
    try {
      // Fatal: bytes that are not UTF-8 are refused, not stored as U+FFFD in the partner's place.
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(raw);
    } catch {
      throw new ApiError('bad_request', 'Request body is not valid UTF-8');
    }
    try {
      ctx.state.body = JSON.parse(text) as unknown;
    } catch {
      throw new ApiError('bad_request', 'Request body is not valid JSON');
    }
    await next();
  };
}

/**
 * A GET, HEAD or DELETE that carries a body anyway: the bytes are read and dropped (up to the same
 * limit) before the answer. Left unread, Node closes the connection under a client still sending,
 * and the client sees a reset instead of the answer.
 */
export function discardBody(maxBytes: number): ApiMiddleware {
  return async (ctx, next) => {
    const hasBody = Number(ctx.get('Content-Length') || '0') > 0 || ctx.get('Transfer-Encoding') !== '';
    if (METHODS_WITH_BODY.has(ctx.method) || !hasBody) return next();
    try {
      await getRawBody(ctx.req, { limit: maxBytes });
    } catch (err) {
      if ((err as { type?: string }).type === 'entity.too.large') throw tooLarge(maxBytes);
      throw new ApiError('bad_request', 'Could not read the request body');
    }
    await next();
  };
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError('payload_too_large', `Request body exceeds ${maxBytes} bytes`, { maxBytes });
}
