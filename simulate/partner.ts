/**
 * The partner's side of the simulation: the public HTTP API with an app's credentials, retried the way
 * the API asks partners to retry (same Idempotency-Key, same body), so a request that met a paused
 * database or Temporal, or a 5xx, is sent again until it gets a final answer.
 */

/** A US bank account to link (JPMorgan Chase's New York routing number); the sandbox provider verifies it. */
export const US_BANK_ACCOUNT = {
  country: 'US',
  currency: 'USD',
  accountHolderName: 'Ada Lovelace',
  bankName: 'JPMorgan Chase Bank, N.A.',
  bankCode: 'CHASUS33',
  routingNumber: '021000021',
  accountNumber: '000123456789',
  accountType: 'checking',
};

export class PartnerApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
  ) {
    super(`${what}: HTTP ${status} ${JSON.stringify(body)}`);
  }
}

export interface PartnerResponse<T> {
  status: number;
  body: T;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Worth sending again: the service did not decide (5xx, rate limited, a request with the same key still running). */
function retryable(status: number, body: unknown): boolean {
  if (status >= 500 || status === 429) return true;
  const code = (body as { error?: { code?: string } } | undefined)?.error?.code;
  return status === 409 && code === 'request_in_progress';
}

export class PartnerClient {
  private readonly auth: string;
  /** Requests sent again after a retryable answer or a network error, for the summary. */
  retries = 0;

  constructor(
    private readonly baseUrl: string,
    credential: { appId: string; appSecret: string },
    private readonly opts: { requestTimeoutMs?: number; giveUpAfterMs?: number } = {},
  ) {
    this.auth = `Basic ${Buffer.from(`${credential.appId}:${credential.appSecret}`).toString('base64')}`;
  }

  async request<T = any>(method: string, path: string, init: { body?: unknown; key?: string } = {}): Promise<PartnerResponse<T>> {
    const headers: Record<string, string> = { authorization: this.auth };
    // Serialized once: a retry must send the very same bytes, or the Idempotency-Key conflicts.
    const body = init.body === undefined ? undefined : JSON.stringify(init.body);
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (init.key) headers['idempotency-key'] = init.key;
    const deadline = Date.now() + (this.opts.giveUpAfterMs ?? 180_000);
    let delay = 250;
    for (let attempt = 1; ; attempt += 1) {
      let failure: string;
      try {
        const res = await fetch(`${this.baseUrl}${path}`, {
          method,
          headers,
          body,
          signal: AbortSignal.timeout(this.opts.requestTimeoutMs ?? 30_000),
        });
        const text = await res.text();
        const parsed: unknown = text ? JSON.parse(text) : undefined;
        if (!retryable(res.status, parsed)) {
          if (res.status >= 400) throw new PartnerApiError(res.status, parsed, `${method} ${path}`);
          return { status: res.status, body: parsed as T };
        }
        failure = `HTTP ${res.status} ${text.slice(0, 200)}`;
      } catch (err) {
        if (err instanceof PartnerApiError) throw err;
        failure = err instanceof Error ? err.message : String(err);
      }
      if (Date.now() + delay > deadline) throw new Error(`${method} ${path}: no final answer after ${attempt} attempts (last: ${failure})`);
      this.retries += 1;
      await sleep(delay);
      delay = Math.min(delay * 2, 3000);
    }
  }

  get<T = any>(path: string) {
    return this.request<T>('GET', path);
  }

  post<T = any>(path: string, body: unknown, key?: string) {
    return this.request<T>('POST', path, { body, key });
  }

  put<T = any>(path: string, body: unknown) {
    return this.request<T>('PUT', path, { body });
  }
}
