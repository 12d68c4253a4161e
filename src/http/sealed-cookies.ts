import { randomBytes } from 'node:crypto';
import type { ParameterizedContext } from 'koa';
import { openSealedText, sealText } from '../domain/keys/sealed-text';
import { safeEqual } from '../platform/secrets';
import type { ServiceSecret } from '../domain/keys/service-keys';

/**
 * The cookies of a signed-in HTML area (the operator console, the partner dashboard): a session
 * cookie naming a server-side session and carrying its forms' CSRF token, and a short-lived one for
 * the sign-in form's own CSRF token. Both are sealed (AES-GCM under SERVICE_SECRET), HttpOnly,
 * SameSite=Strict, and placed by `cookiePlace`: over http sent only under the area's path, over
 * https `__Host-` cookies of the whole host. Whether a session is live is the caller's
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

/** A cookie's name and the Path and Secure it is set with. */
export interface CookiePlace {
  name: string;
  path: string;
  secure: boolean;
}

/**
 * Where every cookie of the service lives. Served over https (PUBLIC_BASE_URL), it is
 * `__Host-<name>`: the browser then takes it only with Secure, Path=/ and no Domain, so neither a
 * sibling subdomain nor a plain-http page can plant or shadow it. Over plain http (development) a
 * browser refuses that prefix, so the plain name, the given path and no Secure.
 */
export function cookiePlace(publicBaseUrl: string, name: string, path: string): CookiePlace {
  return new URL(publicBaseUrl).protocol === 'https:' ? { name: `__Host-${name}`, path: '/', secure: true } : { name, path, secure: false };
}

export function sealedCookies(opts: {
  /** The area's base URL as browsers reach it: https places the cookies as `__Host-` ones (cookiePlace). */
  publicBaseUrl: string;
  path: string;
  sessionCookie: string;
  label: string;
  serviceSecret: ServiceSecret;
}): SealedCookies {
  const place = (name: string): CookiePlace => cookiePlace(opts.publicBaseUrl, name, opts.path);
  const sessionPlace = place(opts.sessionCookie);
  const loginPlace = place(`${opts.sessionCookie}_login`);
  const sessionCookie = sessionPlace.name;
  const loginCookie = loginPlace.name;
  const set = (ctx: Ctx, name: string, value: string | null, maxAgeSeconds: number) => {
    const { path, secure } = name === sessionCookie ? sessionPlace : loginPlace;
    // Behind a TLS-terminating proxy (PUBLIC_BASE_URL https) the cookie is Secure although this hop is http.
    if (secure) ctx.cookies.secure = true;
    ctx.cookies.set(name, value, {
      httpOnly: true,
      sameSite: 'strict',
      path,
      secure,
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
      const s = open(ctx, sessionCookie);
      return s && typeof s.who === 'string' && typeof s.id === 'string'
        ? { id: s.id, who: s.who, csrf: s.csrf, expiresAt: s.expiresAt }
        : null;
    },
    write(ctx, id, who, seconds) {
      const session: CookieSession = { id, who, csrf: randomBytes(32).toString('base64url'), expiresAt: Date.now() + seconds * 1000 };
      set(ctx, sessionCookie, seal(sessionCookie, session), seconds);
      set(ctx, loginCookie, null, 0);
      return session;
    },
    clear: (ctx) => set(ctx, sessionCookie, null, 0),
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
