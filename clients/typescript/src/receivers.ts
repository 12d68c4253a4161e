import type { IncomingMessage, ServerResponse } from 'node:http';
import { readRawBody } from './raw-body';
import { verifyWebhook, WebhookVerificationError, type VerifyWebhookOptions } from './verify';
import type { AnyWebhookEvent } from './webhook-events';

export interface WebhookReceiverOptions extends VerifyWebhookOptions {
  /** The endpoint's signing secret (`whsec_...`). */
  secret: string;
  /** Bodies larger than this are refused (default 1 MiB). */
  maxBytes?: number;
}

const DEFAULT_MAX_BYTES = 1024 * 1024;

/**
 * Verifies one request against its raw bytes. A body an earlier parser kept as raw bytes
 * (`express.raw()`) is used as is; otherwise the stream is read here, so mount this before any JSON
 * parser. Answers the verified event, or the verification error.
 */
async function verifiedEvent(req: IncomingMessage & { body?: unknown }, opts: WebhookReceiverOptions): Promise<AnyWebhookEvent> {
  const raw = Buffer.isBuffer(req.body) ? req.body : await readRawBody(req, opts.maxBytes ?? DEFAULT_MAX_BYTES);
  return verifyWebhook(raw, req.headers, opts.secret, opts) as AnyWebhookEvent;
}

interface KoaLikeContext {
  req: IncomingMessage;
  status: number;
  body: unknown;
  state: Record<string, unknown>;
}

/**
 * Koa middleware: verifies the delivery and puts it at `ctx.state.webhookEvent`, or answers 400 (a
 * delivery answered 400 is abandoned: a forged or stale request is not retried). Mount it on the
 * webhook route before any body parser.
 */
export function koaWebhook(opts: WebhookReceiverOptions) {
  return async (ctx: KoaLikeContext, next: () => Promise<unknown>): Promise<void> => {
    try {
      ctx.state.webhookEvent = await verifiedEvent(ctx.req, opts);
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      ctx.status = 400;
      ctx.body = { error: err.code };
      return;
    }
    await next();
  };
}

/**
 * Express middleware: verifies the delivery and puts it at `req.webhookEvent`, or answers 400. Mount
 * it before `express.json()` on the webhook route, or after `express.raw({ type: '*\/*' })`.
 */
export function expressWebhook(opts: WebhookReceiverOptions) {
  return (
    req: IncomingMessage & { body?: unknown; webhookEvent?: AnyWebhookEvent },
    res: ServerResponse,
    next: (err?: unknown) => void,
  ): void => {
    verifiedEvent(req, opts).then(
      (event) => {
        req.webhookEvent = event;
        next();
      },
      (err: unknown) => {
        if (!(err instanceof WebhookVerificationError)) return next(err);
        res.statusCode = 400;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ error: err.code }));
      },
    );
  };
}
