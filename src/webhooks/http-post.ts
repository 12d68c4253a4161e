import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  classifyAddress,
  DestinationNotAllowedError,
  guardedLookup,
  hostOf,
  isTrustedDestination,
  type DestinationPolicy,
} from './destination';

export interface PostOptions {
  policy: DestinationPolicy;
  /** Whole-request budget: connect, send, and read the (capped) response. */
  timeoutMs: number;
  /** Bytes of the response body read at most; the rest is discarded. */
  maxResponseBytes: number;
}

export type PostResult =
  | { kind: 'response'; status: number; headers: http.IncomingHttpHeaders; body: string; latencyMs: number }
  | { kind: 'timeout'; error: string; latencyMs: number }
  | { kind: 'connection_error'; error: string; latencyMs: number }
  | { kind: 'destination_not_allowed'; error: string; latencyMs: number };

/**
 * One POST, no redirects followed, no connection reuse. Private addresses are refused (unless the
 * policy allows them) at connection time through a guarded DNS lookup; an IP-literal host is checked
 * before connecting. Never throws: every failure is a result.
 */
export function postWebhook(target: string, headers: Record<string, string>, body: Buffer, opts: PostOptions): Promise<PostResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise<PostResult>((resolve) => {
    let settled = false;
    // Armed below, after `finish` (which clears it) is defined.
    let timer: NodeJS.Timeout | undefined = undefined;
    const finish = (result: PostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      finish({ kind: 'connection_error', error: 'invalid URL', latencyMs: 0 });
      return;
    }
    const host = hostOf(url);
    const policy = isTrustedDestination(url, opts.policy) ? { allowPrivateDestinations: true } : opts.policy;
    if (!policy.allowPrivateDestinations && isIP(host) && classifyAddress(host) !== 'public') {
      const refused = new DestinationNotAllowedError(host, classifyAddress(host), host);
      finish({ kind: 'destination_not_allowed', error: refused.message, latencyMs: 0 });
      return;
    }
    const controller = new AbortController();
    timer = setTimeout(() => {
      controller.abort();
      finish({ kind: 'timeout', error: `no complete response within ${opts.timeoutMs} ms`, latencyMs: elapsed() });
    }, opts.timeoutMs);
    const transport = url.protocol === 'https:' ? https : http;
    const req = transport.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(body.length) },
        agent: false,
        lookup: guardedLookup(policy),
        signal: controller.signal,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () =>
          finish({
            kind: 'response',
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            latencyMs: elapsed(),
          });
        res.on('data', (chunk: Buffer) => {
          if (size >= opts.maxResponseBytes) return;
          const take = chunk.subarray(0, opts.maxResponseBytes - size);
          chunks.push(take);
          size += take.length;
          if (size >= opts.maxResponseBytes) {
            done();
            res.destroy();
          }
        });
        res.on('end', done);
        res.on('error', done); // status and headers arrived; a cut-off body still counts as that response
      },
    );
    req.on('error', (err: Error & { code?: string }) => {
      if (err instanceof DestinationNotAllowedError || err.code === 'EDESTINATIONNOTALLOWED') {
        finish({ kind: 'destination_not_allowed', error: err.message, latencyMs: elapsed() });
      } else if (err.name === 'AbortError') {
        finish({ kind: 'timeout', error: `no complete response within ${opts.timeoutMs} ms`, latencyMs: elapsed() });
      } else {
        finish({ kind: 'connection_error', error: `${err.code ?? err.name}: ${err.message}`.slice(0, 500), latencyMs: elapsed() });
      }
    });
    req.end(body);
  });
}
