import type { ApiMiddleware } from '../context';
import { atCapacity } from './error-handler';

/**
 * Admission to the API's writes (docs/decisions/operations.md "Overload is refused at the door"):
 * each one may start a workflow or signal one, and under overload a request queued behind the
 * database pool or the engine only answers 503 seconds later, having cost work. So each API process
 * lets at most `maxInFlight` writes run and `maxQueued` wait, each for at most `maxQueueWaitMs`;
 * any more is refused at once, before authentication or a byte of its body is read.
 */
export interface AdmissionPolicy {
  maxInFlight: number;
  maxQueued: number;
  maxQueueWaitMs: number;
}

type Release = () => void;

/** The bound itself: enter() answers a release once admitted, or null when refused (full, or waited too long). */
export class AdmissionGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly policy: AdmissionPolicy) {}

  get inFlight(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }

  enter(): Promise<Release | null> | Release | null {
    if (this.running < this.policy.maxInFlight) return this.admit();
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
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running -= 1;
      this.waiting.shift()?.();
    };
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
      release();
    }
  };
}
