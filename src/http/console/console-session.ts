import type { ParameterizedContext } from 'koa';
import type { PrismaClient } from '../../db/client';
import { consoleSessionStore } from '../../domain/operators/console-sessions';
import { adminTokenMatcher } from '../middleware/admin-auth';
import type { ServiceSecret } from '../../domain/keys/service-keys';
import { sealedCookies, type CookieSession } from '../sealed-cookies';

/**
 * The operator console's session: who logged in (the name they gave), until when, and the CSRF token
 * its forms carry, in sealed cookies sent only to /console (src/http/sealed-cookies.ts). The session
 * itself lives server-side (src/domain/operators/console-sessions.ts): logout ends it for every copy of the
 * cookie, and so does a change of the admin token; it also ends by itself at its expiry.
 */
export const SESSION_COOKIE = 'pp_console';

export type ConsoleSession = CookieSession;

type Ctx = ParameterizedContext<unknown>;

export interface SessionKeeper {
  /** The admin token, compared in constant time (both sides hashed first, whatever their lengths). */
  tokenMatches(presented: string): boolean;
  current(ctx: Ctx): Promise<ConsoleSession | null>;
  start(ctx: Ctx, who: string): Promise<ConsoleSession>;
  end(ctx: Ctx, session: ConsoleSession): Promise<void>;
  csrfMatches(session: ConsoleSession, presented: string): boolean;
  loginCsrf(ctx: Ctx): string;
  loginCsrfMatches(ctx: Ctx, presented: string): boolean;
}

export function sessionKeeper(opts: {
  prisma: PrismaClient;
  adminToken: string;
  serviceSecret: ServiceSecret;
  sessionSeconds: number;
  secureCookies: boolean;
}): SessionKeeper {
  const store = consoleSessionStore(opts.prisma, opts.adminToken);
  const cookies = sealedCookies({
    path: '/console',
    sessionCookie: SESSION_COOKIE,
    label: 'console-session',
    serviceSecret: opts.serviceSecret,
    secureCookies: opts.secureCookies,
  });
  return {
    tokenMatches: adminTokenMatcher(opts.adminToken),
    async current(ctx) {
      const s = cookies.read(ctx);
      return s && (await store.isLive(s.id)) ? s : null;
    },
    async start(ctx, who) {
      const id = await store.open(who, new Date(Date.now() + opts.sessionSeconds * 1000));
      return cookies.write(ctx, id, who, opts.sessionSeconds);
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
