import { AssertionError } from 'node:assert';
import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The one polling loop of the tests: read, and if not done, do what moves the world on (mine, poke,
 * sleep) and read again, up to a deadline. A read that throws is "not yet" (a row not written yet,
 * a server restarting), except when the answer itself was wrong: an assertion (the OpenAPI checker's
 * among them), a schema violation or a 5xx answer fails the wait at once, not at the deadline.
 */

/** A 5xx answer to a request made while polling: a fault of the service, never "not yet". */
export class ServerErrorAnswer extends Error {
  constructor(
    readonly status: number,
    readonly request: string,
    readonly text: string,
  ) {
    super(`${request} answered ${status}: ${text.slice(0, 500)}`);
    this.name = 'ServerErrorAnswer';
  }
}

/** A wait that gave up: at its deadline, or at once on a wrong answer (then `cause` is that answer). */
export class WaitFailed extends Error {
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'WaitFailed';
  }
}

const polling = new AsyncLocalStorage<string>();

/** What the poll in progress waits for, when the caller is inside one (call() then refuses 5xx answers). */
export function pollInProgress(): string | undefined {
  return polling.getStore();
}

/** Errors that end a wait at once: the answer was wrong, not late. */
export function isWrongAnswer(err: unknown): boolean {
  return err instanceof AssertionError || err instanceof ServerErrorAnswer || (err instanceof Error && err.name === 'ZodError');
}

/** A check: reads once; answers the value when done, else undefined, null or false. `saw` notes what it read, for the failure message. */
export type Check<T> = (saw: (observation: unknown) => void) => Promise<T | undefined | null | false> | T | undefined | null | false;

export interface PollOptions<T> {
  timeoutMs: number;
  /** What moves the world on between two reads (mine a block, poke the scanner, sleep). */
  between: () => Promise<void>;
  /** Whether a value read means done (default: anything but undefined, null and false). */
  done?: (value: T) => boolean;
}

const isValue = (value: unknown) => value !== undefined && value !== null && value !== false;

/** An observation, as a failure message shows it (JSON, bigints as strings, cut at 1,500 characters). */
export function describeSeen(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  let text: string | undefined;
  try {
    text = JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  } catch {
    text = undefined;
  }
  return (text ?? String(value)).slice(0, 1500);
}

/** Reads until done or the deadline; `what` names the awaited state in every failure. */
export async function poll<T>(check: Check<T>, what: string, opts: PollOptions<T>): Promise<T> {
  const started = Date.now();
  const deadline = started + opts.timeoutMs;
  const done = opts.done ?? isValue;
  let seen: { value: unknown } | undefined;
  let lastError: unknown;
  let reads = 0;
  let noted = false;
  const saw = (observation: unknown) => {
    seen = { value: observation };
    noted = true;
  };
  for (;;) {
    reads += 1;
    let value: T | undefined | null | false = undefined;
    noted = false;
    try {
      value = await polling.run(what, () => check(saw));
      lastError = undefined;
      if (!noted) seen = { value };
    } catch (err) {
      if (isWrongAnswer(err)) {
        throw new WaitFailed(
          `gave up at once waiting for ${what} (read ${reads}, after ${Date.now() - started} ms): ${err instanceof Error ? err.message : String(err)}`,
          { cause: err },
        );
      }
      lastError = err;
    }
    if (isValue(value) && done(value as T)) return value as T;
    if (Date.now() >= deadline) {
      const last = [
        seen ? `last seen: ${describeSeen(seen.value)}` : 'nothing read',
        lastError === undefined ? '' : `last error: ${describeSeen(lastError)}`,
      ]
        .filter(Boolean)
        .join('; ');
      throw new WaitFailed(
        `timed out after ${opts.timeoutMs} ms (${reads} reads) waiting for ${what}; ${last}`,
        lastError === undefined ? undefined : { cause: lastError },
      );
    }
    await opts.between();
  }
}

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls check until it gives a value (25 ms apart); a generous deadline, not a timing assertion. */
export function until<T>(check: Check<T>, what: string, timeoutMs = 20_000): Promise<T> {
  return poll(check, what, { timeoutMs, between: () => pause(25) });
}
