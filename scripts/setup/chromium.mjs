// Step: Debian's Chromium, for the browser tests (hosted checkout, operator console) driven by
// playwright-core. Playwright's own browser download needs the internet; Debian's package does not.
// CHROMIUM_PATH overrides; otherwise /usr/bin/chromium, installed with apt when missing and we are root.

import { aptInstall, aptInstallHint, isExecutable, logFile, SetupError } from './util.mjs';

export const chromiumPath = (env = process.env) => env.CHROMIUM_PATH || '/usr/bin/chromium';

export async function chromium() {
  const bin = chromiumPath();
  if (isExecutable(bin)) return { cached: true };
  if (process.env.CHROMIUM_PATH)
    throw new SetupError(`CHROMIUM_PATH=${bin} is not an executable`, ['point CHROMIUM_PATH at a Chromium binary, or unset it']);
  if (!(await aptInstall(['chromium'], logFile('chromium'))) || !isExecutable(bin)) {
    throw new SetupError('Chromium is not installed (the browser tests drive it headless)', [
      aptInstallHint('chromium'),
      'or set CHROMIUM_PATH to a Chromium binary',
    ]);
  }
  return { note: 'installed with apt' };
}
