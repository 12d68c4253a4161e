import type { Database } from '../src/db/client';
import type { Logger } from '../src/logger';

export interface ActivityDeps {
  db: Database;
  logger: Logger;
}

/** All activities, each feature's from its own factory, with dependencies injected. */
export function createActivities(_deps: ActivityDeps) {
  return {};
}

export type Activities = ReturnType<typeof createActivities>;
