import type { ParameterizedContext } from 'koa';
import type { PrismaClient } from '../../db/client';
import { consoleSessionStore } from '../../domain/operators/console-sessions';
import type { SignedInOperator } from '../../domain/operators/operator-accounts';
import type { ServiceSecret } from '../../domain/keys/service-keys';
import { sealedCookies, type CookieSession } from '../sealed-cookies';

/**
 * The operator console's session: which operator signed in, until when, and the CSRF token its forms
 * carry, in sealed cookies (src/http/sealed-cookies.ts). The session itself lives server-side
 * (src/domain/operators/console-sessions.ts): logout ends it for every copy of the cookie, and so does
 * disabling the operator; it also ends by itself at its expiry.
 */
export const SESSION_COOKIE = 'pp_console';

export type ConsoleSession = CookieSession & { operator: SignedInOperator };

type Ctx = ParameterizedContext<unknown>;

export interface SessionKeeper {
  current(ctx: Ctx): Promise<ConsoleSession | null>;
  start(ctx: Ctx, operator: SignedInOperator): Promise<ConsoleSession>;
  end(ctx: Ctx, session: ConsoleSession): Promise<void>;
  csrfMatches(session: ConsoleSession, presented: string): boolean;
  loginCsrf(ctx: Ctx): string;
  loginCsrfMatches(ctx: Ctx, presented: string): boolean;
}

export function sessionKeeper(opts: {
  prisma: PrismaClient;
  serviceSecret: ServiceSecret;
  sessionSeconds: number;
  /** The admin listener's URL as operators reach it: https makes the cookies `__Host-` ones. */
  adminBaseUrl: string;
}): SessionKeeper {
  const store = consoleSessionStore(opts.prisma);
  // The console has the admin listener to itself: its cookies go to every path of that origin.
  const cookies = sealedCookies({
    path: '/',
    sessionCookie: SESSION_COOKIE,
    label: 'console-session',
    serviceSecret: opts.serviceSecret,
    publicBaseUrl: opts.adminBaseUrl,
  });
  return {
    async current(ctx) {
      const s = cookies.read(ctx);
      const operator = s ? await store.operatorOf(s.id) : null;
      return s && operator ? { ...s, operator } : null;
    },
    async start(ctx, operator) {
      const id = await store.open(operator.id, new Date(Date.now() + opts.sessionSeconds * 1000));
      return { ...cookies.write(ctx, id, operator.email, opts.sessionSeconds), operator };
    },
    async end(ctx, session) {
      await store.end(session.id);
      cookies.clear(ctx);
    },
    csrfMatches: cookies.csrfMatches,
    loginCsrf: cookies.loginCsrf,
    loginCsrfMatches: cookies.loginCsrfMatches,
  };
}
