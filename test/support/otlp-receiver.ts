import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as OTLP/JSON carries it, with its process's service name. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
  service: string;
}

export interface OtlpReceiver {
  url: string;
  spans: OtlpSpan[];
  close(): Promise<void>;
}

/** An OTLP/HTTP traces receiver (JSON, as the exporter sends it): every span it was sent, with its service. */
export async function otlpReceiver(): Promise<OtlpReceiver> {
  const spans: OtlpSpan[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: Array<{
            resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
            scopeSpans: Array<{ spans: Omit<OtlpSpan, 'service'>[] }>;
          }>;
        };
        for (const rs of parsed.resourceSpans) {
          const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
          for (const ss of rs.scopeSpans) for (const span of ss.spans) spans.push({ ...span, service });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Each span's ancestors' names, nearest first, as far as the spans received reach. */
export function ancestry(span: OtlpSpan, spans: OtlpSpan[]): string[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const names: string[] = [];
  for (
    let at = span.parentSpanId ? byId.get(span.parentSpanId) : undefined;
    at;
    at = at.parentSpanId ? byId.get(at.parentSpanId) : undefined
  )
    names.push(at.name);
  return names;
}

/** A span's duration in milliseconds. */
export const spanMs = (span: OtlpSpan): number => Number(BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano)) / 1e6;

/** Whether the span is a database statement (the pg instrumentation's). */
export const isSql = (span: OtlpSpan): boolean =>
  span.attributes?.some((a) => a.key === 'db.system' || a.key === 'db.system.name') ?? false;
