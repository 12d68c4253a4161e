import type { ApiMiddleware } from '../context';
import { initialLimit, nextLimit, type AdaptiveLimitPolicy, type LimitState } from '../../platform/adaptive-limit';
import { atCapacity } from './error-handler';

/**
 * Admission to the API's writes (docs/decisions/operations.md "Overload is refused at the door"):
 * each one may start a workflow or signal one, and under overload a request queued behind the
 * database pool or the engine only answers 503 seconds later, having cost work. So each API process
 * lets at most `maxInFlight` writes run (fewer while `adaptive` learns they queue: src/platform/adaptive-limit.ts)
 * and `maxQueued` wait, each for at most `maxQueueWaitMs`; any more is refused at once, before
 * authentication or a byte of its body is read.
 */
export interface AdmissionPolicy {
  maxInFlight: number;
  maxQueued: number;
  maxQueueWaitMs: number;
  adaptive?: Omit<AdaptiveLimitPolicy, 'maxLimit'>;
}

/** Ends a write's admission; given its route, the write's time teaches the adaptive limit. */
type Release = (route?: string) => void;

/** The bound itself: enter() answers a release once admitted, or null when refused (full, or waited too long). */
export class AdmissionGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly limitPolicy: AdaptiveLimitPolicy | null;
  private learned: LimitState | null;

  constructor(private readonly policy: AdmissionPolicy) {
    this.limitPolicy = policy.adaptive ? { ...policy.adaptive, maxLimit: policy.maxInFlight } : null;
    this.learned = this.limitPolicy && initialLimit(this.limitPolicy);
  }

  get inFlight(): number {
    return this.running;
  }

  /** How many may run now: the learned limit, or maxInFlight. */
  get limit(): number {
    return Math.floor(this.learned?.limit ?? this.policy.maxInFlight);
  }

  get queued(): number {
    return this.waiting.length;
  }

  enter(): Promise<Release | null> | Release | null {
    if (this.running < this.limit) return this.admit();
    if (this.waiting.length >= this.policy.maxQueued) return null;
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(this.admit());
      };
      // A request-scoped deadline, not a schedule: it only ends this wait.
      const timer = setTimeout(() => {
        const at = this.waiting.indexOf(wake);
        if (at >= 0) this.waiting.splice(at, 1);
        resolve(null);
      }, this.policy.maxQueueWaitMs);
      this.waiting.push(wake);
    });
  }

  private admit(): Release {
    this.running += 1;
    const admittedAt = performance.now();
    let released = false;
    return (route) => {
      if (released) return;
      released = true;
      this.running -= 1;
      if (route !== undefined) this.learn(route, performance.now() - admittedAt);
      while (this.running < this.limit && this.waiting.length > 0) this.waiting.shift()!();
    };
  }

  private learn(route: string, tookMs: number): void {
    if (!this.limitPolicy || !this.learned) return;
    this.learned = nextLimit(this.limitPolicy, this.learned, { route, tookMs, nowMs: performance.now() });
  }
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Writes pass the gate; reads go straight on (they start no workflow). */
export function admission(gate: AdmissionGate): ApiMiddleware {
  return async (ctx, next) => {
    if (READS.has(ctx.method)) return next();
    const release = await gate.enter();
    if (!release) throw atCapacity();
    try {
      await next();
    } finally {
      release(`${ctx.method} ${typeof ctx._matchedRoute === 'string' ? ctx._matchedRoute : 'unrouted'}`);
    }
  };
}
