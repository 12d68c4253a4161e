import pg from 'pg';

export interface ChannelListener {
  /** Resolves once the first LISTEN is in place (later reconnects are the listener's own business). */
  ready: Promise<void>;
  stop(): Promise<void>;
}

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;
/**
 * How often the session is asked a `SELECT 1`, and how long an answer may take. A connection can die
 * silently (a NAT or proxy dropping it, a partition): no error, no end, and no notification ever
 * again. TCP keepalive finds that only after many minutes; an unanswered heartbeat within seconds.
 */
export const LISTENER_HEARTBEAT = { everyMs: 5_000, answerWithinMs: 3_000 };

/**
 * A dedicated connection (not from a pool: LISTEN belongs to one session) that LISTENs on `channel`
 * and calls `onNotification` with each notification's payload. When the connection fails (the server restarts,
 * an operator terminates the backend) it reconnects with a growing delay, and calls `onConnected`
 * after every LISTEN, the first included: notifications sent while nobody listened are gone, so the
 * caller acts once as if one had come.
 */
export function listenOnChannel(opts: {
  url: string;
  channel: string;
  /** Shows in pg_stat_activity, so an operator (or a test) can find the session. */
  applicationName: string;
  onNotification: (payload: string) => void;
  onConnected: () => void;
  onError: (err: Error, retryInMs: number) => void;
  heartbeat?: { everyMs: number; answerWithinMs: number };
}): ChannelListener {
  const heartbeat = opts.heartbeat ?? LISTENER_HEARTBEAT;
  let stopped = false;
  let client: pg.Client | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let beatTimer: NodeJS.Timeout | undefined;
  let delay = FIRST_RETRY_MS;
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));

  const connect = async () => {
    retryTimer = undefined;
    if (stopped) return;
    const c = new pg.Client({
      connectionString: opts.url,
      application_name: opts.applicationName,
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
      query_timeout: heartbeat.answerWithinMs,
    });
    client = c;
    let failed = false;
    const fail = (err: Error) => {
      if (failed || stopped) return;
      failed = true;
      client = undefined;
      clearTimeout(beatTimer);
      c.removeAllListeners('notification');
      void c.end().catch(() => undefined);
      opts.onError(err, delay);
      retryTimer = setTimeout(() => void connect(), delay);
      delay = Math.min(delay * 2, MAX_RETRY_MS);
    };
    c.on('error', fail);
    c.on('end', () => fail(new Error('listener connection ended')));
    c.on('notification', (msg) => {
      if (msg.channel === opts.channel) opts.onNotification(msg.payload ?? '');
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${pg.escapeIdentifier(opts.channel)}`);
    } catch (err) {
      fail(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    if (failed || stopped) return;
    delay = FIRST_RETRY_MS;
    markReady();
    opts.onConnected();
    const beat = () => {
      beatTimer = setTimeout(() => {
        c.query('SELECT 1').then(
          () => !failed && !stopped && beat(),
          (err: unknown) => fail(new Error(`listener heartbeat unanswered: ${err instanceof Error ? err.message : String(err)}`)),
        );
      }, heartbeat.everyMs);
      beatTimer.unref();
    };
    beat();
  };
  void connect();

  return {
    ready,
    async stop() {
      stopped = true;
      if (retryTimer) clearTimeout(retryTimer);
      clearTimeout(beatTimer);
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}
