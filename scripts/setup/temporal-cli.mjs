// Step: the Temporal CLI (`temporal server start-dev`, the dev server with the Web UI) for `npm start`,
// the benchmark and the simulation (its short run is in `npm test`). Built once with `go install` from the Go module proxy (about
// 4.5 minutes on 2 cores) into <cache>/temporal-cli-<version>/temporal.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isExecutable, logFile, runOrFail, SetupError, temporalCliPath, toolchain, which, withLock } from './util.mjs';

export async function temporalCli() {
  const bin = temporalCliPath();
  if (isExecutable(bin)) return { cached: true };
  const binDir = path.dirname(bin);
  fs.mkdirSync(binDir, { recursive: true });
  const { module, version } = toolchain.temporalCli;

  // One build at a time: a second set-up waits for the first one's binary.
  return withLock(
    `${binDir}.lock`,
    () => isExecutable(bin),
    async () => {
      const go = which('go', ['/usr/local/go/bin', path.join(os.homedir(), 'go', 'bin'), path.join(os.homedir(), 'sdk', 'go', 'bin')]);
      if (!go) {
        throw new SetupError('`go` is not installed (needed once to build the Temporal CLI dev server)', [
          'install Go 1.21 or newer (Go downloads the 1.25 toolchain the CLI needs from the Go module proxy), e.g. from https://go.dev/dl/',
          `or build elsewhere and copy the binary to ${bin}`,
        ]);
      }
      const tmpBin = `${binDir}.tmp-${process.pid}`;
      fs.rmSync(tmpBin, { recursive: true, force: true });
      const log = logFile('temporal-cli');
      // Later CLI versions carry a `replace` directive in go.mod, which `go install` refuses.
      await runOrFail(
        `go install ${module}@v${version}`,
        go,
        ['install', `${module}@v${version}`],
        {
          log,
          cwd: os.tmpdir(),
          env: {
            GOBIN: tmpBin,
            GOTOOLCHAIN: process.env.GOTOOLCHAIN || 'auto',
            GOFLAGS: process.env.GOFLAGS || '-buildvcs=false',
          },
        },
        ['check access to the Go module proxy (go env GOPROXY)', 'Go 1.21+ is needed; see ' + log],
      );
      fs.renameSync(path.join(tmpBin, 'temporal'), bin);
      fs.rmSync(tmpBin, { recursive: true, force: true });
      return { note: `built v${version}` };
    },
  );
}
