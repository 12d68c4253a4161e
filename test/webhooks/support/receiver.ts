import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
}

export interface ScriptedResponse {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Runs before the response is sent (e.g. an operator action while the delivery is in flight). */
  before?: () => Promise<void>;
}

/**
 * A real local HTTP receiver. Each hook gets its own path with a script of responses (then 200 "ok");
 * every request is recorded with its raw bytes.
 */
export interface Receiver {
  port: number;
  /** A new hook path answering `script` in order; returns its URL. */
  hook(script?: ScriptedResponse[], host?: string): { url: string; path: string };
  requests(path: string): ReceivedRequest[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const scripts = new Map<string, ScriptedResponse[]>();
  const received = new Map<string, ReceivedRequest[]>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const list = received.get(path) ?? [];
      list.push({ path, headers: req.headers, rawBody: Buffer.concat(chunks) });
      received.set(path, list);
      const next = scripts.get(path)?.shift() ?? { status: 200, body: 'ok' };
      res.on('error', () => undefined); // the client may have given up (timeout tests)
      void (next.before ?? (async () => undefined))().then(() => {
        res.writeHead(next.status, { 'content-type': 'text/plain', ...next.headers });
        res.end(next.body ?? '');
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    hook(script = [], host = '127.0.0.1') {
      const path = `/hooks/${randomUUID()}`;
      scripts.set(path, [...script]);
      return { url: `http://${host}:${port}${path}`, path };
    },
    requests: (path) => received.get(path) ?? [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
