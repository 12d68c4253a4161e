import * as client from 'openid-client';
import type { OperatorOidcSettings } from '../../config';
import type { OidcIdentity } from './operator-accounts';

/**
 * Console sign-in through the company's OpenID Connect provider (docs/decisions/dashboard-and-console.md
 * "Operators sign in through the company's provider"): the authorization code flow with PKCE, state
 * and nonce, the client authenticated with its secret (HTTP Basic). The provider's own policy is the
 * second factor. Its metadata is discovered at the first sign-in and kept; a failed discovery is
 * tried again at the next.
 */
export interface OidcTransaction {
  state: string;
  nonce: string;
  codeVerifier: string;
}

export interface OperatorOidc {
  /** Where the browser goes to sign in, and what its return must match (kept by the browser, sealed). */
  begin(): Promise<{ url: string; transaction: OidcTransaction }>;
  /** The identity the provider vouches for, from the callback's query string; throws when a check fails. */
  finish(query: string, transaction: OidcTransaction): Promise<OidcIdentity>;
}

export const OIDC_CALLBACK_PATH = '/console/login/oidc/callback';
const DISCOVERY_TIMEOUT_SECONDS = 10;

export function operatorOidc(settings: OperatorOidcSettings, adminBaseUrl: string): OperatorOidc {
  const redirectUri = `${adminBaseUrl}${OIDC_CALLBACK_PATH}`;
  const issuer = new URL(settings.issuer);
  let discovered: Promise<client.Configuration> | undefined;
  const configuration = () => {
    discovered ??= client
      .discovery(issuer, settings.clientId, undefined, client.ClientSecretBasic(settings.clientSecret), {
        timeout: DISCOVERY_TIMEOUT_SECONDS,
        // http only where the production check allows it: a provider on this machine in the sandbox.
        execute: issuer.protocol === 'http:' ? [client.allowInsecureRequests] : [],
      })
      .catch((err: unknown) => {
        discovered = undefined;
        throw err;
      });
    return discovered;
  };
  return {
    async begin() {
      const config = await configuration();
      const transaction = { state: client.randomState(), nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier() };
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: 'openid email',
        state: transaction.state,
        nonce: transaction.nonce,
        code_challenge: await client.calculatePKCECodeChallenge(transaction.codeVerifier),
        code_challenge_method: 'S256',
      });
      return { url: url.href, transaction };
    },
    async finish(query, transaction) {
      const config = await configuration();
      // The callback URL is rebuilt from the configured base, never from the request's Host.
      const current = new URL(redirectUri);
      current.search = query;
      const tokens = await client.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: transaction.codeVerifier,
        expectedState: transaction.state,
        expectedNonce: transaction.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims()!;
      // A provider may keep the email claims out of the ID token and serve them from UserInfo.
      const info = typeof claims.email === 'string' ? claims : await client.fetchUserInfo(config, tokens.access_token, claims.sub);
      return {
        issuer: claims.iss,
        subject: claims.sub,
        email: typeof info.email === 'string' ? info.email : null,
        emailVerified: info.email_verified === true,
      };
    },
  };
}
