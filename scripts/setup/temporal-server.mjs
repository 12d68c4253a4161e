// Step: Temporal Server, a real cluster's binary (frontend, history, matching and worker roles), for
// the production rehearsal and the simulation and bench with `--engine cluster`. Built once with
// `go install` from the Go module proxy (about 8 minutes on 2 cores) into
// <cache>/temporal-server-<version>/, with the release's SQL schema tool (`sql`) and its versioned
// PostgreSQL schemas (`schema/postgresql/v12/{temporal,visibility}`), copied from the module source so
// that schema and server are always of one release.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isExecutable, logFile, runOrFail, SetupError, temporalServerDir, toolchain, which, withLock } from './util.mjs';

const SCHEMAS = path.join('schema', 'postgresql', 'v12');

export async function temporalServer() {
  const dir = temporalServerDir();
  const done = () =>
    isExecutable(path.join(dir, 'server')) &&
    isExecutable(path.join(dir, 'sql')) &&
    fs.existsSync(path.join(dir, SCHEMAS, 'temporal', 'versioned'));
  if (done()) return { cached: true };
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const { module, version, goToolchain } = toolchain.temporalServer;

  return withLock(`${dir}.lock`, done, async () => {
    const go = which('go', ['/usr/local/go/bin', path.join(os.homedir(), 'go', 'bin'), path.join(os.homedir(), 'sdk', 'go', 'bin')]);
    if (!go) {
      throw new SetupError('`go` is not installed (needed once to build Temporal Server)', [
        `install Go 1.21 or newer (it downloads ${goToolchain}, which the server needs, from the Go module proxy), e.g. from https://go.dev/dl/`,
        `or build elsewhere and copy server, sql and ${SCHEMAS} to ${dir}`,
      ]);
    }
    const tmp = `${dir}.tmp-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    const log = logFile('temporal-server');
    const env = { GOBIN: tmp, GOTOOLCHAIN: process.env.GOTOOLCHAIN || goToolchain, GOFLAGS: process.env.GOFLAGS || '-buildvcs=false' };
    const packages = [`${module}/cmd/server@v${version}`, `${module}/cmd/tools/sql@v${version}`];
    await runOrFail(`go install ${packages.join(' ')}`, go, ['install', ...packages], { log, cwd: os.tmpdir(), env }, [
      'check access to the Go module proxy (go env GOPROXY)',
      `the release needs the ${goToolchain} toolchain, which go downloads from the proxy; see ${log}`,
    ]);
    const modCache = execFileSync(go, ['env', 'GOMODCACHE'], { env: { ...process.env, ...env }, encoding: 'utf8' }).trim();
    const source = path.join(modCache, `${module}@v${version}`, SCHEMAS);
    if (!fs.existsSync(source)) throw new SetupError(`the schemas of ${module}@v${version} are not at ${source}`, [`see ${log}`]);
    fs.cpSync(source, path.join(tmp, SCHEMAS), { recursive: true });
    // The module cache is read-only, and so are the copies: make them removable by a later clean-up.
    for (const entry of fs.readdirSync(path.join(tmp, 'schema'), { recursive: true }))
      fs.chmodSync(path.join(tmp, 'schema', String(entry)), 0o755);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
    return { note: `built v${version}` };
  });
}
