import type { AppCredentialCache } from '../domain/apps/apps';
import type { Logger } from '../logger';
import { listenOnChannel, type ChannelListener } from '../db/listener';

/** The channel the apps and app_secrets triggers notify on commit, with the app id (prisma/migrations/*_app_credential_rotation). */
export const APP_CREDENTIALS_CHANNEL = 'app_credentials';
export const CREDENTIAL_CHANGES_APPLICATION_NAME = 'partner-payments credential changes';

/**
 * Keeps an API process's credential cache honest: each committed change to an app or its secrets
 * makes the cache forget that app at once (not at a timer). While the connection is down the cache
 * holds nothing (every request reads PostgreSQL); once LISTENing again it starts empty.
 */
export function followCredentialChanges(opts: { url: string; cache: AppCredentialCache; logger: Logger }): ChannelListener {
  const listener = listenOnChannel({
    url: opts.url,
    channel: APP_CREDENTIALS_CHANNEL,
    applicationName: CREDENTIAL_CHANGES_APPLICATION_NAME,
    onNotification: (appId) => opts.cache.forget(appId),
    onConnected: () => opts.cache.setLive(true),
    onError: (err, retryInMs) => {
      opts.cache.setLive(false);
      opts.logger.warn(
        { msg: err.message, retryInMs },
        'credential change listener lost its connection; not caching credentials until it is back',
      );
    },
  });
  return {
    ready: listener.ready,
    async stop() {
      opts.cache.setLive(false);
      await listener.stop();
    },
  };
}
