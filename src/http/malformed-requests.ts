import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, type ErrorCode } from '../domain/requests/errors';
import { SVC_VERSION_HEADER } from './middleware/versioning';

/**
 * A request Node's HTTP parser refuses (headers over its 16 KiB limit, a method it doesn't know,
 * a broken request line) never reaches Koa, and Node's own answer is a bare status with no body.
 * This answers it in the spec's envelope, with Svc-Version like every other response.
 */
export function answerMalformedRequests(server: Server, apiVersion: string): Server {
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    // Nothing to answer on a connection that is already gone.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const error = refusalFor(err.code);
    const body = JSON.stringify(error.toBody());
    // A HEAD answer has no body (a client would read one as the start of garbage). The method is
    // known only when the refused bytes hold the request line, which they do for any short request.
    const head = err.rawPacket?.toString('latin1', 0, 5) === 'HEAD ';
    socket.end(
      [
        `HTTP/1.1 ${error.status} ${STATUS_TEXT[error.status] ?? 'Bad Request'}`,
        'Content-Type: application/json; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        `${SVC_VERSION_HEADER}: ${apiVersion}`,
        'Connection: close',
        '',
        head ? '' : body,
      ].join('\r\n'),
    );
  });
  return server;
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

function refusalFor(code: string | undefined): ApiError {
  const refusals: Record<string, [ErrorCode, string]> = {
    HPE_HEADER_OVERFLOW: ['headers_too_large', 'Request headers are too large'],
    ERR_HTTP_REQUEST_TIMEOUT: ['request_timeout', 'The request was not received in time'],
  };
  const [errorCode, message] = refusals[code ?? ''] ?? ['bad_request', 'Malformed HTTP request'];
  return new ApiError(errorCode, message);
}
