import { randomBytes } from 'node:crypto';
import type { ParameterizedContext } from 'koa';
import type { PrismaClient } from '../../db/client';
import { consoleSessionStore } from '../../domain/console-sessions';
import { openSealedText, sealText } from '../../domain/sealed-text';
import { safeEqual } from '../../domain/secrets';
import { adminTokenMatcher } from '../middleware/admin-auth';
import type { ServiceSecret } from '../../domain/service-keys';

/**
 * The operator console's session: who logged in (the name they gave), until when, and the CSRF token
 * its forms carry, sealed (AES-GCM under SERVICE_SECRET, src/domain/sealed-text.ts) into a cookie the
 * page's scripts can't read (HttpOnly), sent only to /console and never from another site
 * (SameSite=Strict). The session itself lives server-side (src/domain/console-sessions.ts): logout
 * ends it for every copy of the cookie, and so does a change of the admin token; it also ends by
 * itself at its expiry. The login form has a CSRF token of its own, in a short-lived sealed cookie.
 */
export const SESSION_COOKIE = 'pp_console';
const LOGIN_COOKIE = 'pp_console_login';
const LABEL = 'console-session';
const LOGIN_SECONDS = 600;

export interface ConsoleSession {
  id: string;
  who: string;
  csrf: string;
  expiresAt: number;
}

type Ctx = ParameterizedContext<unknown>;

export interface SessionKeeper {
  /** The admin token, compared in constant time (both sides hashed first, whatever their lengths). */
  tokenMatches(presented: string): boolean;
  current(ctx: Ctx): Promise<ConsoleSession | null>;
  start(ctx: Ctx, who: string): Promise<ConsoleSession>;
  end(ctx: Ctx, session: ConsoleSession): Promise<void>;
  /** A form's CSRF token against the session's, in constant time. */
  csrfMatches(session: ConsoleSession, presented: string): boolean;
  /** The login form's CSRF token (set now, in its own cookie). */
  loginCsrf(ctx: Ctx): string;
  loginCsrfMatches(ctx: Ctx, presented: string): boolean;
}

export function sessionKeeper(opts: { prisma: PrismaClient; adminToken: string; serviceSecret: ServiceSecret; sessionSeconds: number; secureCookies: boolean }): SessionKeeper {
  const store = consoleSessionStore(opts.prisma, opts.adminToken);
  const cookie = (ctx: Ctx, name: string, value: string | null, maxAgeSeconds: number) => {
    // Behind a TLS-terminating proxy (PUBLIC_BASE_URL https) the cookie is Secure although this hop is http.
    if (opts.secureCookies) ctx.cookies.secure = true;
    ctx.cookies.set(name, value, { httpOnly: true, sameSite: 'strict', path: '/console', secure: opts.secureCookies, maxAge: maxAgeSeconds * 1000, overwrite: true });
  };
  const read = (ctx: Ctx, name: string): { csrf: string; expiresAt: number; who?: string; id?: string } | null => {
    const raw = ctx.cookies.get(name);
    if (!raw) return null;
    const opened = openSealedText(opts.serviceSecret, LABEL, name, raw);
    if (opened instanceof Error) return null;
    try {
      const value = JSON.parse(opened) as { csrf: string; expiresAt: number; who?: string; id?: string };
      return typeof value.csrf === 'string' && typeof value.expiresAt === 'number' && value.expiresAt > Date.now() ? value : null;
    } catch {
      return null;
    }
  };
  const seal = (name: string, value: object) => sealText(opts.serviceSecret, LABEL, name, JSON.stringify(value));
  return {
    tokenMatches: adminTokenMatcher(opts.adminToken),
    async current(ctx) {
      const s = read(ctx, SESSION_COOKIE);
      if (!s || typeof s.who !== 'string' || typeof s.id !== 'string' || !(await store.isLive(s.id))) return null;
      return { id: s.id, who: s.who, csrf: s.csrf, expiresAt: s.expiresAt };
    },
    async start(ctx, who) {
      const expiresAt = Date.now() + opts.sessionSeconds * 1000;
      const id = await store.open(who, new Date(expiresAt));
      const session: ConsoleSession = { id, who, csrf: randomBytes(32).toString('base64url'), expiresAt };
      cookie(ctx, SESSION_COOKIE, seal(SESSION_COOKIE, session), opts.sessionSeconds);
      cookie(ctx, LOGIN_COOKIE, null, 0);
      return session;
    },
    async end(ctx, session) {
      await store.end(session.id);
      cookie(ctx, SESSION_COOKIE, null, 0);
    },
    csrfMatches: (session, presented) => safeEqual(session.csrf, presented),
    loginCsrf(ctx) {
      const csrf = randomBytes(32).toString('base64url');
      cookie(ctx, LOGIN_COOKIE, seal(LOGIN_COOKIE, { csrf, expiresAt: Date.now() + LOGIN_SECONDS * 1000 }), LOGIN_SECONDS);
      return csrf;
    },
    loginCsrfMatches(ctx, presented) {
      const s = read(ctx, LOGIN_COOKIE);
      return s !== null && safeEqual(s.csrf, presented);
    },
  };
}
