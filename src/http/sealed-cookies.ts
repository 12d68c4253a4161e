import { randomBytes } from 'node:crypto';
import type { ParameterizedContext } from 'koa';
import { openSealedText, sealText } from '../domain/keys/sealed-text';
import { safeEqual } from '../platform/secrets';
import type { ServiceSecret } from '../domain/keys/service-keys';

/**
 * The cookies of a signed-in HTML area (the operator console, the partner dashboard): a session
 * cookie naming a server-side session and carrying its forms' CSRF token, and a short-lived one for
 * the sign-in form's own CSRF token. Both are sealed (AES-GCM under SERVICE_SECRET), HttpOnly,
 * SameSite=Strict and sent only under the area's path. Whether a session is live is the caller's
 * store's to say; the cookie only names it.
 */
export interface CookieSession {
  id: string;
  who: string;
  csrf: string;
  expiresAt: number;
}

type Ctx = ParameterizedContext<unknown>;

export interface SealedCookies {
  /** The session the cookie names, unexpired; not yet checked against the store. */
  read(ctx: Ctx): CookieSession | null;
  write(ctx: Ctx, id: string, who: string, seconds: number): CookieSession;
  clear(ctx: Ctx): void;
  /** A form's CSRF token against the session's, in constant time. */
  csrfMatches(session: CookieSession, presented: string): boolean;
  /** The sign-in form's CSRF token (set now, in its own cookie). */
  loginCsrf(ctx: Ctx): string;
  loginCsrfMatches(ctx: Ctx, presented: string): boolean;
}

const LOGIN_SECONDS = 600;

export function sealedCookies(opts: {
  path: string;
  sessionCookie: string;
  label: string;
  serviceSecret: ServiceSecret;
  secureCookies: boolean;
}): SealedCookies {
  const loginCookie = `${opts.sessionCookie}_login`;
  const set = (ctx: Ctx, name: string, value: string | null, maxAgeSeconds: number) => {
    // Behind a TLS-terminating proxy (PUBLIC_BASE_URL https) the cookie is Secure although this hop is http.
    if (opts.secureCookies) ctx.cookies.secure = true;
    ctx.cookies.set(name, value, {
      httpOnly: true,
      sameSite: 'strict',
      path: opts.path,
      secure: opts.secureCookies,
      maxAge: maxAgeSeconds * 1000,
      overwrite: true,
    });
  };
  const open = (ctx: Ctx, name: string): { csrf: string; expiresAt: number; who?: string; id?: string } | null => {
    const raw = ctx.cookies.get(name);
    if (!raw) return null;
    const opened = openSealedText(opts.serviceSecret, opts.label, name, raw);
    if (opened instanceof Error) return null;
    try {
      const value = JSON.parse(opened) as { csrf: string; expiresAt: number; who?: string; id?: string };
      return typeof value.csrf === 'string' && typeof value.expiresAt === 'number' && value.expiresAt > Date.now() ? value : null;
    } catch {
      return null;
    }
  };
  const seal = (name: string, value: object) => sealText(opts.serviceSecret, opts.label, name, JSON.stringify(value));
  return {
    read(ctx) {
      const s = open(ctx, opts.sessionCookie);
      return s && typeof s.who === 'string' && typeof s.id === 'string'
        ? { id: s.id, who: s.who, csrf: s.csrf, expiresAt: s.expiresAt }
        : null;
    },
    write(ctx, id, who, seconds) {
      const session: CookieSession = { id, who, csrf: randomBytes(32).toString('base64url'), expiresAt: Date.now() + seconds * 1000 };
      set(ctx, opts.sessionCookie, seal(opts.sessionCookie, session), seconds);
      set(ctx, loginCookie, null, 0);
      return session;
    },
    clear: (ctx) => set(ctx, opts.sessionCookie, null, 0),
    csrfMatches: (session, presented) => safeEqual(session.csrf, presented),
    loginCsrf(ctx) {
      const csrf = randomBytes(32).toString('base64url');
      set(ctx, loginCookie, seal(loginCookie, { csrf, expiresAt: Date.now() + LOGIN_SECONDS * 1000 }), LOGIN_SECONDS);
      return csrf;
    },
    loginCsrfMatches(ctx, presented) {
      const s = open(ctx, loginCookie);
      return s !== null && safeEqual(s.csrf, presented);
    },
  };
}
