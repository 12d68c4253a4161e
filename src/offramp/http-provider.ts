import type { z } from 'zod';
import {
  SIGNATURE_HEADER,
  ZBankAccount,
  ZCallback,
  ZPayout,
  ZProviderError,
  ZQuote,
  checkSignature,
  type TBankAccount,
  type TPayout,
} from './sandbox-provider/contract';
import {
  MALFORMED_CALLBACK,
  ProviderError,
  type BankAccountRegistration,
  type OfframpProvider,
  type Payout,
  type PayoutRequest,
  type ProviderBankAccount,
  type ProviderCallback,
  type Quote,
  type QuoteRequest,
} from './offramp-provider';

/**
 * The off-ramp provider over HTTP (the sandbox provider's contract, sandbox-provider/contract.ts).
 * Every call has its own deadline; every POST carries an idempotency key taken from the caller's ids
 * (the Payment id for a payout, the bank account id for a registration), so the caller's retry of an
 * `unavailable` answer can never make a second payout. The adapter itself never retries: the caller
 * (an activity) owns the retry budget.
 */
export interface HttpOfframpProviderOptions {
  code?: string;
  baseUrl: string;
  /** HMAC key of the provider's callbacks. Never logged. */
  callbackSecret: string;
  /** Deadline of each call (default 3 s). */
  timeoutMs?: number;
  /** Clock for the callbacks' freshness check (tests). */
  now?: () => Date;
}

export const DEFAULT_PROVIDER_TIMEOUT_MS = 3000;

export class HttpOfframpProvider implements OfframpProvider {
  readonly code: string;
  private readonly baseUrl: string;
  private readonly secret: string;
  private readonly timeoutMs: number;
  private readonly now: () => Date;

  constructor(opts: HttpOfframpProviderOptions) {
    this.code = opts.code ?? 'sandbox';
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.secret = opts.callbackSecret;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS;
    this.now = opts.now ?? (() => new Date());
  }

  async quote(request: QuoteRequest): Promise<Quote> {
    const body = {
      country: request.country,
      currency: request.currency,
      rail: request.rail,
      asset: request.asset,
      sourceAmountAtomic: request.sourceAmountAtomic.toString(),
      ...(request.sandboxScenario ? { sandboxScenario: request.sandboxScenario } : {}),
    };
    const key = request.idempotencyKey ?? `quote:${crypto.randomUUID()}`;
    const { body: q } = await this.call('POST', '/v1/quotes', ZQuote, { body, idempotencyKey: key });
    return {
      quoteId: q.quoteId,
      providerPrincipalAtomic: BigInt(q.providerPrincipalAtomic),
      providerFeeAtomic: BigInt(q.providerFeeAtomic),
      rate: q.rate,
      destinationAmount: q.destinationAmount,
      currency: q.currency,
      depositAddress: q.depositAddress,
      expiresAt: new Date(q.expiresAt),
    };
  }

  async registerBankAccount(registration: BankAccountRegistration): Promise<ProviderBankAccount> {
    const { body } = await this.call('POST', '/v1/bank-accounts', ZBankAccount, {
      body: registration,
      idempotencyKey: registration.bankAccountId,
    });
    return toAccount(body);
  }

  async getBankAccount(bankAccountId: string): Promise<ProviderBankAccount | null> {
    const res = await this.call('GET', `/v1/bank-accounts/${encodeURIComponent(bankAccountId)}`, ZBankAccount, { notFound: true });
    return res ? toAccount(res.body) : null;
  }

  async createPayout(request: PayoutRequest): Promise<Payout> {
    const body = { ...request, amountAtomic: request.amountAtomic.toString() };
    const { body: payout } = await this.call('POST', '/v1/payouts', ZPayout, { body, idempotencyKey: request.paymentId });
    return toPayout(payout);
  }

  async getPayout(paymentId: string): Promise<Payout | null> {
    const res = await this.call('GET', `/v1/payouts/${encodeURIComponent(paymentId)}`, ZPayout, { notFound: true });
    return res ? toPayout(res.body) : null;
  }

  verifyCallback(rawBody: string, headers: Record<string, string | string[] | undefined>): ProviderCallback {
    const raw = headers[SIGNATURE_HEADER];
    const header = Array.isArray(raw) ? raw[0] : raw;
    const check = checkSignature(this.secret, rawBody, header, Math.floor(this.now().getTime() / 1000));
    if (check !== 'ok') throw new ProviderError('failure', `callback signature ${check}`, `signature_${check}`);
    let json: unknown;
    try {
      json = JSON.parse(rawBody);
    } catch {
      throw new ProviderError('failure', 'callback body is not JSON', MALFORMED_CALLBACK);
    }
    const parsed = ZCallback.safeParse(json);
    if (!parsed.success) throw new ProviderError('failure', 'callback body is not a known callback', MALFORMED_CALLBACK);
    // What it names, nothing of what it says: the caller reads that from the provider.
    const event = parsed.data;
    if (event.type === 'bank_account.updated') return { type: event.type, bankAccountId: event.data.bankAccountId };
    return { type: event.type, paymentId: event.data.paymentId };
  }

  private async call<T>(
    method: 'GET' | 'POST',
    path: string,
    schema: z.ZodType<T>,
    opts: { body?: unknown; idempotencyKey?: string; notFound: true },
  ): Promise<{ status: number; body: T } | null>;
  private async call<T>(
    method: 'GET' | 'POST',
    path: string,
    schema: z.ZodType<T>,
    opts: { body?: unknown; idempotencyKey?: string },
  ): Promise<{ status: number; body: T }>;
  private async call<T>(
    method: 'GET' | 'POST',
    path: string,
    schema: z.ZodType<T>,
    opts: { body?: unknown; idempotencyKey?: string; notFound?: boolean },
  ): Promise<{ status: number; body: T } | null> {
    const what = `${method} ${path.split('/').slice(0, 3).join('/')}`; // no ids or account data in messages
    let res: Response;
    let text: string;
    try {
      res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: {
          accept: 'application/json',
          ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(opts.idempotencyKey ? { 'idempotency-key': opts.idempotencyKey } : {}),
        },
        body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      text = await res.text();
    } catch (err) {
      const reason =
        err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')
          ? `no answer within ${this.timeoutMs} ms`
          : 'connection failed';
      throw new ProviderError('unavailable', `provider ${what}: ${reason}`);
    }
    if (res.status === 404 && opts.notFound) return null;
    if (res.status >= 500) throw new ProviderError('unavailable', `provider ${what} answered ${res.status}`, errorCode(text));
    if (res.status >= 400) {
      const code = errorCode(text);
      const kind = code === 'quote_expired' ? 'quote_expired' : 'failure';
      throw new ProviderError(kind, `provider ${what} refused (${res.status}${code ? ` ${code}` : ''})`, code);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ProviderError('unavailable', `provider ${what} answered a body that is not JSON`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new ProviderError('unavailable', `provider ${what} answered an unexpected shape`);
    const body = parsed.data as T & { status?: string };
    if (body.status === 'uncertain')
      throw new ProviderError('uncertain', `provider ${what}: the payout's state is uncertain`, 'payout_uncertain');
    return { status: res.status, body };
  }
}

function errorCode(text: string): string | null {
  try {
    const parsed = ZProviderError.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data.error.code : null;
  } catch {
    return null;
  }
}

function toAccount(a: TBankAccount): ProviderBankAccount {
  return { providerAccountId: a.providerAccountId, status: a.status, failureReason: a.failureReason };
}

function toPayout(p: TPayout): Payout {
  if (p.status === 'uncertain') throw new ProviderError('uncertain', "the payout's state is uncertain", 'payout_uncertain');
  return {
    payoutId: p.payoutId,
    paymentId: p.paymentId,
    status: p.status,
    reasonCode: p.reasonCode,
    refundTxHash: p.refundTxHash,
    updatedAt: new Date(p.updatedAt),
  };
}
