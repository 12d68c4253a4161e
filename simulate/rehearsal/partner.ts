/**
 * The partner's side of the rehearsal: the public API through both API processes, as a partner behind
 * a round-robin client would call it. A request that meets a dead process (connection refused or
 * reset) goes to the other one; a 503 with Retry-After, a 429 or a 409 request_in_progress is sent
 * again, same Idempotency-Key and bytes, after the interval asked. Every answer is recorded: its
 * latency under its operation's name, and any 5xx that is not a 503 with Retry-After.
 */

export interface Answer<T = any> {
  status: number;
  body: T;
}

export class PartnerError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
  ) {
    super(`${what}: HTTP ${status} ${JSON.stringify(body).slice(0, 400)}`);
  }
}

export interface Refusal {
  /** When the answer came, and when its request was sent. */
  at: number;
  sentAt: number;
  op: string;
  status: number;
  retryAfter: string | null;
  text: string;
}

export class Recorder {
  readonly latencies = new Map<string, number[]>();
  /** 503 answers with Retry-After: allowed, and compared with the outages afterwards. */
  readonly unavailable: Refusal[] = [];
  /** Any other 5xx: never allowed. */
  readonly broken: Refusal[] = [];
  /** Requests sent again to the other API process after a connection failure. */
  failovers = 0;

  latency(op: string, ms: number): void {
    const list = this.latencies.get(op) ?? [];
    list.push(ms);
    this.latencies.set(op, list);
  }

  percentiles(): Record<string, { n: number; p50: number; p99: number }> {
    const out: Record<string, { n: number; p50: number; p99: number }> = {};
    for (const [op, list] of [...this.latencies].sort(([a], [b]) => a.localeCompare(b))) {
      const sorted = [...list].sort((a, b) => a - b);
      out[op] = { n: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
    }
    return out;
  }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const GIVE_UP_MS = 240_000;

export class RehearsalPartner {
  private next = 0;

  constructor(
    private readonly apiUrls: string[],
    private readonly recorder: Recorder,
    private readonly authorization: string,
  ) {}

  static basic(apiUrls: string[], recorder: Recorder, credential: { appId: string; appSecret: string }): RehearsalPartner {
    return new RehearsalPartner(
      apiUrls,
      recorder,
      `Basic ${Buffer.from(`${credential.appId}:${credential.appSecret}`).toString('base64')}`,
    );
  }

  /** `op` names the operation in the latency table (method and route, no ids). */
  async request<T = any>(
    op: string,
    method: string,
    path: string,
    init: { body?: unknown; key?: string; headers?: Record<string, string> } = {},
  ): Promise<Answer<T>> {
    const headers: Record<string, string> = { authorization: this.authorization, ...init.headers };
    const body = init.body === undefined ? undefined : JSON.stringify(init.body);
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (init.key) headers['idempotency-key'] = init.key;
    const deadline = Date.now() + GIVE_UP_MS;
    let last = '';
    while (Date.now() < deadline) {
      const url = this.apiUrls[this.next++ % this.apiUrls.length]!;
      const t0 = performance.now();
      const sentAt = Date.now();
      let res: Response;
      let text: string;
      try {
        res = await fetch(`${url}${path}`, { method, headers, body, signal: AbortSignal.timeout(30_000) });
        text = await res.text();
      } catch (err) {
        // A process down (refused) or killed mid-request (reset): the other one takes it.
        this.recorder.failovers += 1;
        last = err instanceof Error ? `${err.message} (${String((err as { cause?: unknown }).cause ?? '')})` : String(err);
        await sleep(200);
        continue;
      }
      this.recorder.latency(op, performance.now() - t0);
      const parsed: unknown = text ? JSON.parse(text) : undefined;
      const retryAfter = res.headers.get('retry-after');
      if (res.status >= 500) {
        const refusal = { at: Date.now(), sentAt, op, status: res.status, retryAfter, text: text.slice(0, 300) };
        const capacity = res.status === 503 && retryAfter !== null && /^\d+$/.test(retryAfter);
        (capacity ? this.recorder.unavailable : this.recorder.broken).push(refusal);
        last = `HTTP ${res.status} ${text.slice(0, 200)}`;
        await sleep(capacity ? Number(retryAfter) * 1000 : 1000);
        continue;
      }
      const code = (parsed as { error?: { code?: string } } | undefined)?.error?.code;
      if (res.status === 429 || (res.status === 409 && code === 'request_in_progress')) {
        last = `HTTP ${res.status} ${code}`;
        await sleep(retryAfter && /^\d+$/.test(retryAfter) ? Number(retryAfter) * 1000 : 1000);
        continue;
      }
      if (res.status >= 400) throw new PartnerError(res.status, parsed, `${method} ${path}`);
      return { status: res.status, body: parsed as T };
    }
    throw new Error(`${method} ${path}: no final answer within ${GIVE_UP_MS / 1000} s (last: ${last})`);
  }

  get<T = any>(op: string, path: string, headers?: Record<string, string>) {
    return this.request<T>(op, 'GET', path, headers ? { headers } : {});
  }

  post<T = any>(op: string, path: string, body: unknown, key?: string, headers?: Record<string, string>) {
    return this.request<T>(op, 'POST', path, { body, ...(key ? { key } : {}), ...(headers ? { headers } : {}) });
  }

  put<T = any>(op: string, path: string, body: unknown) {
    return this.request<T>(op, 'PUT', path, { body });
  }
}
