// Step: Debian's docker-compose (1.29), for the test that validates docker-compose.yml with
// `docker-compose config` (test/unit/compose.test.ts). It needs no Docker daemon and no registry: it
// only reads the file. DOCKER_COMPOSE_PATH overrides; otherwise docker-compose on the PATH, installed
// with apt when missing and we are root.

import { aptInstall, aptInstallHint, isExecutable, logFile, SetupError, which } from './util.mjs';

export const dockerComposePath = (env = process.env) => env.DOCKER_COMPOSE_PATH || which('docker-compose');

export async function dockerCompose() {
  if (process.env.DOCKER_COMPOSE_PATH) {
    if (isExecutable(process.env.DOCKER_COMPOSE_PATH)) return { cached: true };
    throw new SetupError(`DOCKER_COMPOSE_PATH=${process.env.DOCKER_COMPOSE_PATH} is not an executable`, [
      'point DOCKER_COMPOSE_PATH at a docker-compose binary, or unset it',
    ]);
  }
  if (dockerComposePath()) return { cached: true };
  if (!(await aptInstall(['docker-compose'], logFile('docker-compose'))) || !dockerComposePath()) {
    throw new SetupError('docker-compose is not installed (a test validates docker-compose.yml with it)', [
      aptInstallHint('docker-compose'),
      'or set DOCKER_COMPOSE_PATH to a docker-compose binary',
    ]);
  }
  return { note: 'installed with apt' };
}
