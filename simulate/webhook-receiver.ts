import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { verifyWebhook } from '../src/webhooks/verify';

/**
 * A partner's webhook endpoint on localhost: verifies every request against the raw body with the
 * endpoint's signing secret (src/webhooks/verify.ts, as examples/webhook-receiver.ts does), records
 * the event ids it accepted, and answers 400 to anything that does not verify. Over https when given a
 * certificate (the production rehearsal); it can be told to fail (500) for a while, as a partner's
 * receiver that is down.
 */
export class WebhookReceiver {
  /** Verified deliveries per event id (a redelivery counts again). */
  readonly delivered = new Map<string, number>();
  /** Each verified delivery with the time it came, in order. */
  readonly receipts: Array<{ id: string; at: number }> = [];
  /** Requests that failed verification, with the reason. */
  readonly refused: string[] = [];
  /** Verified requests answered 500 on purpose (see failUntil). */
  failedOnPurpose = 0;
  /** Until then (epoch ms) every verified request is answered 500 and not counted as delivered. */
  failUntil = 0;
  private secret: string | undefined;

  private readonly server: Server;
  url = '';

  private constructor(tls?: { key: Buffer; cert: Buffer }) {
    const onRequest: RequestListener = (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.handle(Buffer.concat(chunks), req.headers, res));
    };
    this.server = tls ? createHttpsServer(tls, onRequest) : createServer(onRequest);
  }

  static async start(opts: { tls?: { key: Buffer; cert: Buffer } } = {}): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(opts.tls);
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', () => resolve()));
    const port = (receiver.server.address() as AddressInfo).port;
    receiver.url = `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}/webhooks`;
    return receiver;
  }

  /** `127.0.0.1:<port>`, as WEBHOOKS_TRUSTED_DESTINATIONS names it. */
  get hostPort(): string {
    return new URL(this.url).host;
  }

  /** The endpoint's secret, known once the endpoint is registered with this receiver's url. */
  useSecret(secret: string): void {
    this.secret = secret;
  }

  private handle(raw: Buffer, headers: Record<string, string | string[] | undefined>, res: ServerResponse): void {
    try {
      if (!this.secret) throw new Error('no signing secret yet');
      const envelope = verifyWebhook(raw, headers, this.secret);
      if (Date.now() < this.failUntil) {
        this.failedOnPurpose += 1;
        res.writeHead(500).end();
        return;
      }
      this.delivered.set(envelope.id, (this.delivered.get(envelope.id) ?? 0) + 1);
      this.receipts.push({ id: envelope.id, at: Date.now() });
      res.writeHead(200).end();
    } catch (err) {
      this.refused.push(err instanceof Error ? err.message : String(err));
      res.writeHead(400).end();
    }
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }
}
