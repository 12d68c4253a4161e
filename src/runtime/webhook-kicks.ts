import type { WebhookEngine } from '../domain/engine/pure/engine';
import type { Logger } from '../logger';
import { listenOnChannel, type ChannelListener } from '../db/listener';

/** The channel the events table's trigger notifies on commit (prisma/migrations/*_events_notify). */
export const WEBHOOK_EVENTS_CHANNEL = 'webhook_events';
export const WEBHOOK_KICKS_APPLICATION_NAME = 'partner-payments webhook kicks';

/**
 * Calls `fn` with at most one call in flight: requests that arrive meanwhile cause exactly one more
 * call after it, however many there were (that one pass sees everything committed before it started).
 */
export function coalesced(fn: () => Promise<void>): { request(): void; idle(): Promise<void> } {
  let running: Promise<void> | undefined;
  let again = false;
  const run = async () => {
    try {
      do {
        again = false;
        await fn();
      } while (again);
    } finally {
      running = undefined;
    }
  };
  return {
    request() {
      if (running) again = true;
      else running = run();
    },
    idle: async () => {
      await running;
    },
  };
}

/**
 * The worker's after-commit path to the webhook dispatcher: every committed event insert NOTIFYs.
 * With `dispatch` (the worker's own dispatch pass), each notification runs passes here, coalesced,
 * until one drains the outbox: an event reaches its delivery workflow without a signal, a dispatcher
 * workflow task and an activity task in between. A pass that fails falls back to kicking the
 * dispatcher workflow, whose own passes (and poll) stay the safety net; the pass is idempotent and
 * safe beside the dispatcher's (rows claimed FOR UPDATE, deterministic workflow ids). Without
 * `dispatch`, each notification kicks the dispatcher through the gateway (coalesced). A kick that
 * fails is logged and left to the dispatcher's poll; a reconnect acts once for what was missed meanwhile.
 */
export function startWebhookKicks(opts: {
  url: string;
  engine: Pick<WebhookEngine, 'kickWebhookDispatcher'>;
  logger: Logger;
  dispatch?: () => Promise<{ more: boolean }>;
}): ChannelListener {
  const { logger, dispatch } = opts;
  const kick = () =>
    opts.engine
      .kickWebhookDispatcher()
      .catch((err: unknown) =>
        logger.warn({ msg: err instanceof Error ? err.message : String(err) }, 'could not kick the webhook dispatcher; its poll will'),
      );
  const passes = async () => {
    if (!dispatch) return kick();
    try {
      let more = true;
      while (more) more = (await dispatch()).more;
    } catch (err) {
      logger.warn(
        { msg: err instanceof Error ? err.message : String(err) },
        'dispatch pass after commit failed; kicking the webhook dispatcher',
      );
      await kick();
    }
  };
  const kicks = coalesced(passes);
  const listener = listenOnChannel({
    url: opts.url,
    channel: WEBHOOK_EVENTS_CHANNEL,
    applicationName: WEBHOOK_KICKS_APPLICATION_NAME,
    onNotification: () => kicks.request(),
    onConnected: () => kicks.request(),
    onError: (err, retryInMs) => logger.warn({ msg: err.message, retryInMs }, 'webhook event listener lost its connection; reconnecting'),
  });
  return {
    ready: listener.ready,
    async stop() {
      await listener.stop();
      await kicks.idle();
    },
  };
}
