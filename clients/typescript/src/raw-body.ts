import type { IncomingMessage } from 'node:http';

/** The request's bytes as sent: read from the stream, so it must run before any body parser. */
export async function readRawBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buf.length;
    if (size > maxBytes) throw new Error(`webhook body over ${maxBytes} bytes`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}
