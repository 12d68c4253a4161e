// Step: Schemathesis (the OpenAPI fuzzer `npm run fuzz:schemathesis` runs against `npm start`), the
// version pinned in config/toolchain.json, in a virtualenv of its own under
// <cache>/schemathesis-<version>/ (python3 -m venv, then pip from PyPI). Needs Python 3.9+ with venv.

import fs from 'node:fs';
import path from 'node:path';
import { exists, isExecutable, logFile, runOrFail, schemathesisPath, SetupError, toolchain, which, withLock } from './util.mjs';

export async function schemathesis() {
  const bin = schemathesisPath();
  const venv = path.dirname(path.dirname(bin));
  // Written last: a venv half built by an interrupted set-up has none, and is built again.
  const stamp = path.join(venv, '.installed');
  const done = () => exists(stamp) && isExecutable(bin);
  if (done()) return { cached: true };
  const { version } = toolchain.schemathesis;
  return withLock(`${venv}.lock`, done, async () => {
    const python = which('python3');
    if (!python)
      throw new SetupError('`python3` is not installed (Schemathesis runs in a virtualenv of it)', [
        'install Python 3.9+ with its venv module, e.g. apt-get install python3-venv',
      ]);
    fs.rmSync(venv, { recursive: true, force: true });
    const log = logFile('schemathesis');
    const fix = ['check access to PyPI (pip config list)', `see ${log}`];
    await runOrFail('python3 -m venv', python, ['-m', 'venv', venv], { log }, [
      'install the venv module, e.g. apt-get install python3-venv',
      ...fix,
    ]);
    const pip = path.join(venv, 'bin', 'pip');
    await runOrFail(
      `pip install schemathesis==${version}`,
      pip,
      ['install', '--disable-pip-version-check', '--quiet', `schemathesis==${version}`],
      { log },
      fix,
    );
    fs.writeFileSync(stamp, `${version}\n`);
    return { note: `installed ${version}` };
  });
}
