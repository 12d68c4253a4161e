/**
 * Example webhook receiver: what a partner backend runs to consume Partner Payments webhooks.
 *
 *   WEBHOOK_SIGNING_SECRET=whsec_... DATABASE_URL=postgresql://user@host/db PORT=4000 npx tsx examples/webhook-receiver.ts
 *
 * For every POST it
 *   1. reads the raw body and verifies the signature against those bytes (src/webhooks/verify.ts:
 *      HMAC-SHA256 over `<t>.<x-svc-delivery>.<x-svc-event-id>.<rawBody>`, constant-time compare,
 *      timestamps older than 5 minutes refused) -> 400 when it does not verify (not retried);
 *   2. in ONE PostgreSQL transaction records the event id under a unique constraint and applies the
 *      event, so a redelivered event (same x-svc-event-id) is recognised and applied only once;
 *   3. answers 200 only after the commit. Any failure before it answers 500, which the service retries.
 *
 * Events are hints: "applying" one here means queueing the resource for a re-read from the API
 * (GET /v2/accounts/{id}, GET /v2/payments/{id}...), never trusting the payload as the current truth.
 * Unknown event names are recorded and otherwise ignored.
 */
import http from 'node:http';
import pg from 'pg';
import { verifyWebhook, WebhookVerificationError, type WebhookEnvelope } from '../src/webhooks/verify';

const MAX_BODY_BYTES = 1024 * 1024;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS webhook_inbox (
  event_id     TEXT PRIMARY KEY,            -- x-svc-event-id: the unique constraint that deduplicates
  delivery_id  TEXT NOT NULL,               -- x-svc-delivery of the first delivery that got through
  name         TEXT NOT NULL,
  api_version  TEXT NOT NULL,
  payload      JSONB NOT NULL,
  received_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS resource_refresh_queue (
  resource_type TEXT NOT NULL,
  resource_id   TEXT NOT NULL,
  event_id      TEXT NOT NULL REFERENCES webhook_inbox(event_id),
  queued_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (resource_type, resource_id, event_id)
);`;

function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The business side effect, inside the same transaction as the inbox row. */
async function applyEvent(client: pg.PoolClient, event: WebhookEnvelope): Promise<void> {
  const payload = event.payload as Record<string, unknown>;
  const refs: Array<[string, unknown]> = [
    ['payment', payload.paymentId],
    ['deposit', payload.depositId],
    ['account', payload.accountId],
  ];
  const ref = refs.find(([, id]) => typeof id === 'string');
  if (!ref) return; // an event this receiver has no use for (or a new name): recorded, nothing else
  await client.query(
    'INSERT INTO resource_refresh_queue (resource_type, resource_id, event_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
    [ref[0], ref[1], event.id],
  );
}

async function handle(pool: pg.Pool, secret: string, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const reply = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.method !== 'POST') return reply(405, { error: 'POST only' });

  const raw = await readBody(req);
  let event: WebhookEnvelope;
  try {
    event = verifyWebhook(raw, req.headers, secret, { toleranceSeconds: 300 });
  } catch (err) {
    if (err instanceof WebhookVerificationError) return reply(400, { error: err.code });
    throw err;
  }

  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const inserted = await client.query(
      `INSERT INTO webhook_inbox (event_id, delivery_id, name, api_version, payload)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (event_id) DO NOTHING`,
      [event.id, String(req.headers['x-svc-delivery']), event.name, event.apiVersion, JSON.stringify(event.payload)],
    );
    const duplicate = inserted.rowCount === 0;
    if (!duplicate) await applyEvent(client, event);
    await client.query('COMMIT');
    reply(200, { received: true, duplicate });
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

async function main(): Promise<void> {
  const secret = setting('WEBHOOK_SIGNING_SECRET');
  const pool = new pg.Pool({ connectionString: setting('DATABASE_URL') });
  await pool.query(SCHEMA);
  const port = Number(process.env.PORT ?? 4000);
  const server = http.createServer((req, res) => {
    handle(pool, secret, req, res).catch((err: unknown) => {
      console.error('webhook handling failed', err);
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'internal' })); // 500: the service retries this delivery
      }
    });
  });
  server.listen(port, () => console.log(`webhook receiver listening on http://localhost:${port}`));
  const stop = () => server.close(() => void pool.end().then(() => process.exit(0)));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
