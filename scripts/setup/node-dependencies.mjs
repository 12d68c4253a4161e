// Step: node dependencies. `npm ci` from the committed lockfile when node_modules is missing or the
// lockfile changed (stamp: node_modules/.setup-stamp, the lockfile's hash).

import fs from 'node:fs';
import path from 'node:path';
import { exists, readIf, repoLock, ROOT, run, SetupError, sha256, tail, which, withLock, logFile } from './util.mjs';

/** True when node_modules/.package-lock.json (npm's record of the installed tree) matches the lockfile. */
function installedTreeMatchesLock() {
  const hidden = readIf(path.join(ROOT, 'node_modules', '.package-lock.json'));
  if (!hidden) return false;
  try {
    const want = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')).packages || {};
    const have = JSON.parse(hidden).packages || {};
    for (const [key, entry] of Object.entries(want)) {
      if (key === '') continue;
      const got = have[key];
      if (!got) {
        if (entry.optional || entry.peer) continue; // other platforms' binaries
        return false;
      }
      if (got.version !== entry.version || (entry.integrity && got.integrity && got.integrity !== entry.integrity)) return false;
    }
    return Object.keys(have).every((key) => key in want);
  } catch {
    return false;
  }
}

export async function nodeDependencies() {
  const lockPath = path.join(ROOT, 'package-lock.json');
  if (!exists(lockPath)) {
    throw new SetupError('package-lock.json is missing', ['run `npm install` once to create it, and commit it']);
  }
  const want = sha256(fs.readFileSync(lockPath));
  const nodeModules = path.join(ROOT, 'node_modules');
  const stamp = path.join(nodeModules, '.setup-stamp');
  const isDone = () => exists(nodeModules) && readIf(stamp) === want;
  if (isDone()) return { cached: true };
  // One install at a time per checkout: a concurrent set-up waits, then finds it done.
  return withLock(repoLock('npm'), isDone, async () => {
    // A tree npm installed from this very lockfile needs no reinstall (npm ci would delete it first).
    if (exists(nodeModules) && installedTreeMatchesLock()) {
      fs.writeFileSync(stamp, want);
      return { cached: true, note: 'installed tree matches lockfile' };
    }
    const npm = which('npm');
    if (!npm)
      throw new SetupError('npm is not on PATH', ['install Node.js 20+ with npm (e.g. from nodejs.org or `apt-get install nodejs npm`)']);
    const log = logFile('npm');
    const logStart = exists(log) ? fs.statSync(log).size : 0;
    const code = await run(npm, ['ci', '--no-audit', '--no-fund'], { log });
    if (code !== 0) {
      // npm follows a lockfile refusal with its usage text: show the refusal, not the tail.
      const output = fs.readFileSync(log).subarray(logStart).toString('utf8');
      const refusal = output.split('\n').filter((l) => /in sync|Missing: |Invalid: /.test(l));
      const missing = refusal.some((l) => /Missing: |Invalid: /.test(l));
      const shown = missing
        ? refusal
            .slice(0, 15)
            .map((l) => `    | ${l}`)
            .join('\n')
        : tail(log);
      throw new SetupError(
        `npm ci failed (exit code ${code}); from ${log}:\n${shown}`,
        missing
          ? [
              'package.json and package-lock.json disagree: run `npm install` and commit package-lock.json',
              "if the missing packages are other platforms' builds the registry does not serve, run `node scripts/lockfile-platforms.mjs` and commit package-lock.json",
            ]
          : ['check network access to the npm registry (npm config get registry)'],
        log,
      );
    }
    fs.writeFileSync(stamp, want);
    return {};
  });
}
