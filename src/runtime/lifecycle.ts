/**
 * What a running process started, and how it stops. `npm start`, `npm run api|worker` and `npm run
 * bench` stop on SIGINT, SIGTERM or SIGHUP: the first signal stops everything in reverse order of
 * start (the API finishes its in-flight requests, the worker drains once, embedded children stop)
 * and exits 0; a second signal (a second or more later), or a stop that outlasts the grace time, kills what is left and exits
 * 130. Each says one line, never a stack trace.
 */
interface Part {
  name: string;
  stop(): Promise<void>;
  kill?(): void;
}

/** Signals within this long of the first are echoes of it, not a second request. */
const SAME_SIGNAL_MS = 1000;

export const SHUTDOWN_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export class Lifecycle {
  private readonly parts: Part[] = [];
  private closed = false;

  private signalled = false;

  /** True once a shutdown signal came: a start-up failing now is the stop's doing, not a fault. */
  get stoppedBySignal(): boolean {
    return this.signalled;
  }

  /** Registers a started part. One started after the stop began is stopped at once. */
  add(name: string, stop: () => Promise<void>, kill?: () => void): void {
    const part: Part = { name, stop, ...(kill ? { kill } : {}) };
    if (!this.closed) {
      this.parts.push(part);
      return;
    }
    void stop().catch(() => kill?.());
  }

  /** Stops every part, last started first; every part is tried, and the failures are reported together. */
  async stop(): Promise<void> {
    this.closed = true;
    const failures: string[] = [];
    // Taken off one at a time, so a kill() during the stop still reaches the parts not yet stopped.
    for (let part = this.parts.pop(); part; part = this.parts.pop()) {
      try {
        await part.stop();
      } catch (err) {
        failures.push(`${part.name}: ${err instanceof Error ? err.message : String(err)}`);
        part.kill?.();
      }
    }
    if (failures.length) throw new Error(`stop failed (${failures.join('; ')})`);
  }

  /** Synchronous last resort: kills every part that can be killed. */
  kill(): void {
    this.closed = true;
    for (let part = this.parts.pop(); part; part = this.parts.pop()) {
      try {
        part.kill?.();
      } catch {
        /* best effort: the process is exiting */
      }
    }
  }

  /** Stops this lifecycle on the first shutdown signal and exits; see the module comment. */
  stopOnSignals(say: (line: string) => void, graceMs = 30_000): void {
    let stoppingSince: number | undefined;
    const force = (why: string) => {
      say(`${why}: killing what is left`);
      this.kill();
      process.exit(130);
    };
    const onSignal = (signal: NodeJS.Signals) => {
      if (stoppingSince !== undefined) {
        // One Ctrl-C can arrive more than once (the terminal signals the whole group, and npm and tsx
        // relay it); only a signal sent later is someone asking to force.
        if (Date.now() - stoppingSince < SAME_SIGNAL_MS) return;
        return force(`second ${signal}`);
      }
      stoppingSince = Date.now();
      this.signalled = true;
      say(`${signal}: stopping (send it again to force)`);
      setTimeout(() => force(`still stopping after ${graceMs / 1000} s`), graceMs).unref();
      this.stop().then(
        () => {
          say('stopped');
          process.exit(0);
        },
        (err: unknown) => {
          say(err instanceof Error ? err.message : String(err));
          process.exit(1);
        },
      );
    };
    for (const signal of SHUTDOWN_SIGNALS) process.on(signal, onSignal);
  }
}
