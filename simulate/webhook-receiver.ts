import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook } from '../src/webhooks/verify';

/**
 * A partner's webhook endpoint on localhost: verifies every request against the raw body with the
 * endpoint's signing secret (src/webhooks/verify.ts, as examples/webhook-receiver.ts does), records
 * the event ids it accepted, and answers 400 to anything that does not verify.
 */
export class WebhookReceiver {
  /** Verified deliveries per event id (a redelivery counts again). */
  readonly delivered = new Map<string, number>();
  /** Requests that failed verification, with the reason. */
  readonly refused: string[] = [];
  private secret: string | undefined;

  private readonly server: Server;
  url = '';

  private constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.handle(Buffer.concat(chunks), req.headers, res));
    });
  }

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', () => resolve()));
    receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/webhooks`;
    return receiver;
  }

  /** The endpoint's secret, known once the endpoint is registered with this receiver's url. */
  useSecret(secret: string): void {
    this.secret = secret;
  }

  private handle(raw: Buffer, headers: Record<string, string | string[] | undefined>, res: ServerResponse): void {
    try {
      if (!this.secret) throw new Error('no signing secret yet');
      const envelope = verifyWebhook(raw, headers, this.secret);
      this.delivered.set(envelope.id, (this.delivered.get(envelope.id) ?? 0) + 1);
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
