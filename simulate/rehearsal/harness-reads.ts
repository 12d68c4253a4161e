import { classifyFailure } from '../../src/domain/requests/failure-classes';
import { BOUNDS } from './verdicts';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * One of the harness's own reads of the service's database during the load, asked again while
 * PostgreSQL is away (the fault plan kills it): the service waits that out, and so must the
 * harness. Only a database that is away is waited for, and no longer than a part may be away; any
 * other error is thrown at once.
 */
export async function readThroughRestart<T>(what: string, read: () => Promise<T>, withinMs = BOUNDS.backMs): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      return await read();
    } catch (err) {
      if (classifyFailure(err)?.source !== 'database') throw err;
      if (Date.now() > deadline) {
        const reason = err instanceof Error ? err.message : String(err);
        throw new Error(`${what}: the database was away for over ${Math.round(withinMs / 1000)} s (${reason})`, { cause: err });
      }
      await sleep(1000);
    }
  }
}
