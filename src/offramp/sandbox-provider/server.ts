import { createHash, randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Address, Hash } from 'viem';
import type { z } from 'zod';
import type { Logger } from '../../logger';
import {
  SCENARIO_HEADER,
  SIGNATURE_HEADER,
  ZBankAccountRequest,
  ZPayoutRequest,
  ZQuoteRequest,
  ZResolveRequest,
  signCallback,
  type TBankAccount,
  type TCallback,
  type TPayout,
  type TQuote,
} from './contract';
import { SANDBOX_RATES, destinationAmount, providerFeeAtomic } from './pricing';
import type { ProviderWallet } from './chain';
import type { ProviderStore, StoredBankAccount, StoredPayout, StoredQuote } from './store';

/**
 * The sandbox off-ramp provider: quotes, bank account registration and payouts over HTTP, with signed
 * callbacks, and per-request scenarios (docs/decisions/bank-accounts-and-payouts.md, "Off-ramp provider (sandbox)"). It plays a
 * real provider's part in its own process, so the adapter's timeouts, retries and idempotency keys
 * meet a real network peer.
 */
export interface SandboxProviderOptions {
  store: ProviderStore;
  wallet: ProviderWallet;
  logger: Logger;
  /** The one stablecoin it takes: on this chain, at this token address. */
  chainId: number;
  tokenAddress: Address;
  callbackUrl?: string;
  callbackSecret: string;
  quoteTtlSeconds: number;
  /** Delay between a payout's steps (submitted -> processing -> completed or failed). */
  stepMs: number;
  /** Delay before a bank account's verification is decided. */
  verifyDelayMs: number;
  /** How long a `timeout` scenario request hangs (longer than the adapter's timeout). */
  hangMs: number;
  /** `return` scenario: seconds after completion before the ACH return comes by itself. */
  returnAfterSeconds: number;
  callbackAttempts: number;
  callbackBackoffMs: number;
}

/** Requests of these scenarios misbehave this many times per idempotency key, then succeed. */
const MISBEHAVING_REQUESTS = 2;
const MAX_BODY_BYTES = 64 * 1024;
/** setTimeout's ceiling; a later return is re-armed when this fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const hashOf = (value: unknown): string => createHash('sha256').update(JSON.stringify(value)).digest('hex');
const newId = (prefix: string): string => `${prefix}_${randomUUID().replaceAll('-', '')}`;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface SandboxProviderServer {
  server: http.Server;
  /** Re-arms the timers of unfinished payouts and verifications (after a restart). */
  resume(): void;
  close(): Promise<void>;
}

export function createSandboxProviderServer(opts: SandboxProviderOptions): SandboxProviderServer {
  const { store, wallet, logger } = opts;
  const state = store.state;
  const timers = new Set<NodeJS.Timeout>();
  let closing = false;
  // State changes run one at a time (each may await the chain); a hanging request waits outside it.
  let lock: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(fn: () => Promise<T> | T): Promise<T> => {
    const run = lock.then(fn);
    lock = run.catch(() => undefined);
    return run;
  };
  const later = (ms: number, fn: () => Promise<void> | void): void => {
    if (closing) return;
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        if (closing) return;
        Promise.resolve(fn()).catch((err: unknown) => logger.error({ msg: String(err) }, 'sandbox provider timer failed'));
      },
      Math.min(Math.max(ms, 0), MAX_TIMER_MS),
    );
    timers.add(timer);
  };

  // ---- callbacks ----
  const sendCallback = (event: Omit<TCallback, 'id' | 'createdAt'>): void => {
    if (!opts.callbackUrl) return;
    const body = JSON.stringify({ id: newId('evt'), createdAt: new Date().toISOString(), ...event });
    const attempt = async (n: number): Promise<void> => {
      const signature = signCallback(opts.callbackSecret, body, Math.floor(Date.now() / 1000));
      let status = 0;
      try {
        const res = await fetch(opts.callbackUrl!, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signature },
          body,
          signal: AbortSignal.timeout(5000),
        });
        status = res.status;
        await res.arrayBuffer();
      } catch {
        status = 0;
      }
      if (status >= 200 && status < 300) return;
      logger.warn({ type: event.type, status, attempt: n }, 'sandbox provider callback refused; retrying');
      if (n < opts.callbackAttempts) later(opts.callbackBackoffMs * 2 ** (n - 1), () => attempt(n + 1));
    };
    void attempt(1);
  };

  const payoutView = (p: StoredPayout): TPayout => ({
    payoutId: p.payoutId,
    paymentId: p.paymentId,
    status: p.uncertain ? 'uncertain' : p.status,
    amountAtomic: p.request.amountAtomic,
    reasonCode: p.uncertain ? null : p.reasonCode,
    refundTxHash: p.uncertain ? null : p.refundTxHash,
    returnAt: p.returnAt,
    updatedAt: p.updatedAt,
  });
  const accountView = (a: StoredBankAccount): TBankAccount => ({
    bankAccountId: a.bankAccountId,
    providerAccountId: a.providerAccountId,
    status: a.status,
    failureReason: a.failureReason,
    accountNumberLast4: a.accountNumberLast4,
  });
  const quoteView = (q: StoredQuote): TQuote => ({
    quoteId: q.quoteId,
    sourceAmountAtomic: q.sourceAmountAtomic,
    providerPrincipalAtomic: q.providerPrincipalAtomic,
    providerFeeAtomic: q.providerFeeAtomic,
    rate: q.rate,
    destinationAmount: q.destinationAmount,
    currency: q.currency,
    chainId: q.chainId,
    tokenAddress: q.tokenAddress,
    depositAddress: q.depositAddress,
    expiresAt: q.expiresAt,
  });

  // ---- payout lifecycle ----
  const changed = (p: StoredPayout): void => {
    p.updatedAt = new Date().toISOString();
    store.save();
    if (!p.uncertain) sendCallback({ type: 'payout.updated', data: payoutView(p) });
  };

  const step = (paymentId: string): Promise<void> =>
    exclusive(() => {
      const p = state.payouts[paymentId];
      if (!p || p.uncertain || p.refundPending) return;
      if (p.status === 'submitted') {
        p.status = 'processing';
        changed(p);
        later(opts.stepMs, () => step(paymentId));
      } else if (p.status === 'processing') {
        if (p.scenario === 'fail') {
          owe(p, 'failed', 'bank_rejected');
          return;
        }
        p.status = 'completed';
        if (p.scenario === 'return') p.returnAt = new Date(Date.now() + opts.returnAfterSeconds * 1000).toISOString();
        changed(p);
        if (p.returnAt) armReturn(p);
      }
    });

  const armReturn = (p: StoredPayout): void => {
    const due = Date.parse(p.returnAt!) - Date.now();
    later(due, () =>
      exclusive(() => {
        const current = state.payouts[p.paymentId];
        if (!current || current.status !== 'completed' || current.refundPending) return;
        if (Date.parse(current.returnAt!) > Date.now()) return armReturn(current); // past setTimeout's ceiling
        owe(current, 'returned', 'R01');
      }),
    );
  };

  // The funds go back before the status says so: a failed or returned payout always names its refund.
  const owe = (p: StoredPayout, status: 'failed' | 'returned', reasonCode: string): void => {
    p.refundPending = { status, reasonCode };
    p.updatedAt = new Date().toISOString();
    store.save();
    later(0, () => sendRefund(p.paymentId, 1));
  };

  const sendRefund = async (paymentId: string, attempt: number): Promise<void> => {
    const p = state.payouts[paymentId];
    if (!p?.refundPending) return;
    const quote = state.quotes[p.request.quoteId];
    let hash: Hash;
    try {
      hash = await wallet.refund(
        (quote?.tokenAddress ?? opts.tokenAddress) as Address,
        p.request.refundAddress as Address,
        BigInt(p.request.amountAtomic),
      );
    } catch (err) {
      logger.error(
        { paymentId, attempt, msg: err instanceof Error ? err.message.split('\n')[0] : String(err) },
        'sandbox provider refund failed; retrying',
      );
      later(Math.min(1000 * 2 ** (attempt - 1), 30_000), () => sendRefund(paymentId, attempt + 1));
      return;
    }
    await exclusive(() => {
      const owed = p.refundPending!;
      p.status = owed.status;
      p.reasonCode = owed.reasonCode;
      p.refundTxHash = hash;
      p.refundPending = null;
      changed(p);
    });
  };

  const verify = (bankAccountId: string): Promise<void> =>
    exclusive(() => {
      const a = state.bankAccounts[bankAccountId];
      if (!a || a.status !== 'pending') return;
      a.status = a.outcome.status;
      a.failureReason = a.outcome.failureReason;
      store.save();
      sendCallback({ type: 'bank_account.updated', data: accountView(a) });
    });

  // ---- handlers ----
  async function createQuote(req: IncomingMessage): Promise<[number, unknown]> {
    const key = idempotencyKey(req);
    const body = parse(ZQuoteRequest, await readJson(req));
    const scenario = body.sandboxScenario ?? header(req, SCENARIO_HEADER) ?? 'succeed';
    if (scenario === 'error_5xx') throw new HttpFailure(503, 'unavailable', 'sandbox scenario error_5xx');
    return exclusive(() => {
      const hash = hashOf({ ...body, sandboxScenario: scenario });
      const seen = state.quoteKeys[key];
      if (seen) {
        const q = state.quotes[seen]!;
        if (q.requestHash !== hash)
          throw new HttpFailure(409, 'idempotency_conflict', 'this Idempotency-Key was used with another request');
        return [200, quoteView(q)];
      }
      const currency = SANDBOX_RATES[body.currency];
      if (!currency) throw new HttpFailure(422, 'unsupported_currency', `no payouts in ${body.currency}`);
      if (body.asset.chainId !== opts.chainId || body.asset.tokenAddress.toLowerCase() !== opts.tokenAddress.toLowerCase()) {
        throw new HttpFailure(422, 'unsupported_asset', 'this asset is not taken here');
      }
      const source = BigInt(body.sourceAmountAtomic);
      const fee = providerFeeAtomic(source, body.asset.decimals);
      if (fee >= source) throw new HttpFailure(422, 'amount_too_small', 'the amount does not cover the provider fee');
      const principal = source - fee;
      const ttlMs = scenario === 'expired' ? 0 : opts.quoteTtlSeconds * 1000;
      const quote: StoredQuote = {
        quoteId: newId('qt_sbx'),
        idempotencyKey: key,
        requestHash: hash,
        sourceAmountAtomic: source.toString(),
        providerPrincipalAtomic: principal.toString(),
        providerFeeAtomic: fee.toString(),
        rate: currency.rate,
        destinationAmount: destinationAmount(principal, body.asset.decimals, currency),
        currency: body.currency,
        chainId: body.asset.chainId,
        tokenAddress: opts.tokenAddress,
        depositAddress: wallet.address,
        expiresAt: new Date(Date.now() + ttlMs).toISOString(),
      };
      state.quotes[quote.quoteId] = quote;
      state.quoteKeys[key] = quote.quoteId;
      store.save();
      return [201, quoteView(quote)];
    });
  }

  async function registerBankAccount(req: IncomingMessage): Promise<[number, unknown]> {
    const key = idempotencyKey(req);
    const body = parse(ZBankAccountRequest, await readJson(req));
    if (key !== body.bankAccountId) throw new HttpFailure(400, 'bad_request', 'Idempotency-Key must be the bankAccountId');
    return exclusive(() => {
      const hash = hashOf(body);
      const seen = state.bankAccounts[body.bankAccountId];
      if (seen) {
        if (seen.requestHash !== hash)
          throw new HttpFailure(409, 'idempotency_conflict', 'this bank account was registered with other details');
        return [200, accountView(seen)];
      }
      const account: StoredBankAccount = {
        bankAccountId: body.bankAccountId,
        providerAccountId: newId('ba_sbx'),
        requestHash: hash,
        accountNumberLast4: body.accountNumber.slice(-4),
        status: 'pending',
        failureReason: null,
        outcome: verificationOutcome(body.accountNumber),
      };
      state.bankAccounts[body.bankAccountId] = account;
      store.save();
      later(opts.verifyDelayMs, () => verify(account.bankAccountId));
      return [201, accountView(account)];
    });
  }

  async function createPayout(req: IncomingMessage): Promise<[number, unknown]> {
    const key = idempotencyKey(req);
    const body = parse(ZPayoutRequest, await readJson(req));
    if (key !== body.paymentId) throw new HttpFailure(400, 'bad_request', 'Idempotency-Key must be the paymentId');
    const scenario = body.sandboxScenario ?? (header(req, SCENARIO_HEADER) as StoredPayout['scenario'] | undefined) ?? 'succeed';
    const request = { ...body };
    delete request.sandboxScenario;
    const hash = hashOf({ ...request, scenario });
    const [status, payout, seen] = await exclusive(async (): Promise<[number, StoredPayout, number]> => {
      const seenCount = (state.payoutRequests[key] ?? 0) + 1;
      state.payoutRequests[key] = seenCount;
      const existing = state.payouts[key];
      if (existing) {
        store.save();
        if (existing.requestHash !== hash)
          throw new HttpFailure(409, 'idempotency_conflict', 'this paymentId was paid out with another request');
        return [existing.uncertain ? 202 : 200, existing, seenCount];
      }
      if (scenario === 'error_5xx' && seenCount <= MISBEHAVING_REQUESTS) {
        store.save();
        throw new HttpFailure(503, 'unavailable', 'sandbox scenario error_5xx');
      }
      const created = await newPayout(request, scenario, hash);
      return [created.uncertain ? 202 : 201, created, seenCount];
    });
    // The payout exists before the caller gives up: its retry with the same key must find it.
    if (scenario === 'timeout' && seen <= MISBEHAVING_REQUESTS) await sleep(opts.hangMs);
    return [status, payoutView(payout)];
  }

  async function newPayout(
    request: Omit<z.infer<typeof ZPayoutRequest>, 'sandboxScenario'>,
    scenario: StoredPayout['scenario'],
    hash: string,
  ): Promise<StoredPayout> {
    const quote = state.quotes[request.quoteId];
    if (!quote) throw new HttpFailure(422, 'quote_not_found', 'no such quote');
    if (Date.parse(quote.expiresAt) <= Date.now()) throw new HttpFailure(422, 'quote_expired', 'the quote has expired');
    const account = Object.values(state.bankAccounts).find((a) => a.providerAccountId === request.providerAccountId);
    if (!account) throw new HttpFailure(422, 'account_not_found', 'no such bank account');
    if (account.status !== 'verified') throw new HttpFailure(422, 'account_not_verified', `the bank account is ${account.status}`);
    if (request.amountAtomic !== quote.sourceAmountAtomic)
      throw new HttpFailure(422, 'amount_mismatch', "the amount is not the quote's source amount");
    const txKey = request.fundingTxHash.toLowerCase();
    if (state.fundingTxHashes[txKey]) throw new HttpFailure(422, 'funding_already_used', 'this funding transfer paid for another payout');
    let funding: Awaited<ReturnType<ProviderWallet['fundingArrived']>>;
    try {
      funding = await wallet.fundingArrived(request.fundingTxHash as Hash, quote.tokenAddress as Address, BigInt(request.amountAtomic));
    } catch (err) {
      logger.warn({ msg: err instanceof Error ? err.message.split('\n')[0] : String(err) }, 'sandbox provider could not read the chain');
      throw new HttpFailure(503, 'unavailable', 'the chain could not be read');
    }
    if (funding === 'not_found')
      throw new HttpFailure(422, 'funding_not_found', 'no transfer of the token to the deposit address in that transaction');
    if (funding === 'mismatch') throw new HttpFailure(422, 'funding_amount_mismatch', 'the funding transfer is not of amountAtomic');
    const payout: StoredPayout = {
      payoutId: newId('po_sbx'),
      paymentId: request.paymentId,
      requestHash: hash,
      request,
      scenario,
      status: scenario === 'uncertain' ? 'processing' : 'submitted',
      uncertain: scenario === 'uncertain',
      reasonCode: null,
      refundTxHash: null,
      refundPending: null,
      returnAt: null,
      updatedAt: new Date().toISOString(),
    };
    state.payouts[payout.paymentId] = payout;
    state.fundingTxHashes[txKey] = payout.paymentId;
    store.save();
    if (!payout.uncertain) later(opts.stepMs, () => step(payout.paymentId));
    return payout;
  }

  function payoutOf(paymentId: string): StoredPayout {
    const p = state.payouts[paymentId];
    if (!p) throw new HttpFailure(404, 'not_found', 'no payout for this paymentId');
    return p;
  }

  const triggerReturn = (paymentId: string): Promise<[number, unknown]> =>
    exclusive(() => {
      const p = payoutOf(paymentId);
      if (p.status !== 'completed' || p.uncertain || p.refundPending)
        throw new HttpFailure(409, 'not_completed', `the payout is ${p.uncertain ? 'uncertain' : p.status}`);
      owe(p, 'returned', 'R01');
      return [202, payoutView(p)];
    });

  const resolve = async (paymentId: string, req: IncomingMessage): Promise<[number, unknown]> => {
    const body = parse(ZResolveRequest, await readJson(req));
    return exclusive(() => {
      const p = payoutOf(paymentId);
      if (!p.uncertain) throw new HttpFailure(409, 'not_uncertain', 'the payout is not uncertain');
      p.uncertain = false;
      if (body.status === 'failed') owe(p, 'failed', 'bank_rejected');
      else {
        p.status = 'completed';
        changed(p);
      }
      return [200, payoutView(p)];
    });
  };

  async function route(req: IncomingMessage): Promise<[number, unknown]> {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const m = req.method ?? 'GET';
    const at = (...pattern: string[]) => pattern.length === parts.length && pattern.every((p, i) => p === '*' || p === parts[i]);
    if (m === 'GET' && at('health')) return [200, { ok: true, address: wallet.address }];
    if (m === 'POST' && at('v1', 'quotes')) return createQuote(req);
    if (m === 'GET' && at('v1', 'quotes', '*')) {
      const q = state.quotes[parts[2]!];
      if (!q) throw new HttpFailure(404, 'not_found', 'no such quote');
      return [200, quoteView(q)];
    }
    if (m === 'POST' && at('v1', 'bank-accounts')) return registerBankAccount(req);
    if (m === 'GET' && at('v1', 'bank-accounts', '*')) {
      const a = state.bankAccounts[parts[2]!];
      if (!a) throw new HttpFailure(404, 'not_found', 'no such bank account');
      return [200, accountView(a)];
    }
    if (m === 'POST' && at('v1', 'payouts')) return createPayout(req);
    if (m === 'GET' && at('v1', 'payouts', '*')) {
      const p = payoutOf(parts[2]!);
      return [p.uncertain ? 202 : 200, payoutView(p)];
    }
    if (m === 'POST' && at('sandbox', 'payouts', '*', 'return')) return triggerReturn(parts[2]!);
    if (m === 'POST' && at('sandbox', 'payouts', '*', 'resolve')) return resolve(parts[2]!, req);
    throw new HttpFailure(404, 'not_found', 'no such route');
  }

  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    route(req)
      .then(([status, body]) => answer(res, status, body))
      .catch((err: unknown) => {
        if (err instanceof HttpFailure) return answer(res, err.status, { error: { code: err.code, message: err.message } });
        logger.error({ msg: err instanceof Error ? err.message : String(err) }, 'sandbox provider request failed');
        answer(res, 500, { error: { code: 'internal_error', message: 'internal error' } });
      });
  });

  return {
    server,
    resume() {
      for (const p of Object.values(state.payouts)) {
        if (p.refundPending) later(0, () => sendRefund(p.paymentId, 1));
        else if (!p.uncertain && (p.status === 'submitted' || p.status === 'processing')) later(opts.stepMs, () => step(p.paymentId));
        else if (p.status === 'completed' && p.returnAt) armReturn(p);
      }
      for (const a of Object.values(state.bankAccounts))
        if (a.status === 'pending') later(opts.verifyDelayMs, () => verify(a.bankAccountId));
    },
    close() {
      closing = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      return new Promise<void>((resolveClose) => {
        server.close(() => resolveClose());
        server.closeAllConnections();
      });
    },
  };
}

/** Sandbox magic values: the account number's last four digits decide verification. */
export function verificationOutcome(accountNumber: string): StoredBankAccount['outcome'] {
  if (accountNumber.endsWith('0002')) return { status: 'failed', failureReason: 'account_not_found' };
  if (accountNumber.endsWith('0003')) return { status: 'failed', failureReason: 'name_mismatch' };
  return { status: 'verified', failureReason: null };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function idempotencyKey(req: IncomingMessage): string {
  const key = header(req, 'idempotency-key');
  if (!key || key.length > 200) throw new HttpFailure(400, 'bad_request', 'an Idempotency-Key header is required');
  return key;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpFailure(413, 'payload_too_large', 'request body too large');
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new HttpFailure(400, 'bad_request', 'the body is not JSON');
  }
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
    throw new HttpFailure(400, 'bad_request', problems);
  }
  return parsed.data;
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  if (res.writableEnded || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
