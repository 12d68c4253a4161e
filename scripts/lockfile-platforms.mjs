#!/usr/bin/env node
// Records other platforms' optional packages in package-lock.json when the registry in use cannot
// serve their metadata (see docs/decisions/testing-and-tooling.md, "npm ci from the committed lockfile").
//
//   node scripts/lockfile-platforms.mjs           add the missing entries (then commit the lockfile)
//   node scripts/lockfile-platforms.mjs --check   list them; exit 1 when any is missing
//
// npm records every platform package of a dependency (e.g. @swc/core-darwin-arm64) in the lockfile,
// installed or not, so that `npm ci` on any machine finds the tree complete. It can only do that for
// packages whose metadata it can read: a 404 leaves no entry, and `npm ci` then refuses the lockfile
// ("Missing: @foundry-rs/anvil-darwin-amd64@ from lock file"). This script writes the entry npm would
// have written, `{ version, os, cpu, libc, optional: true, ... }`, from the best metadata available:
//   1. the exact version from the registry (with its integrity);
//   2. else the newest version the registry serves (platform fields don't change between releases;
//      no integrity, npm fetches it by name and version where the package is served);
//   3. else the package name (`<base>-<os>-<arch>[-<libc>]`, the convention of swc and foundry) with
//      license, engines and bin copied from a sibling platform package of the same parent.
// Later `npm install` runs keep these entries (npm marks platform-mismatched optional nodes inert,
// and inert nodes stay in the lockfile). Run this again after an upgrade that changes them.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const lockPath = path.join(root, 'package-lock.json');
const check = process.argv.includes('--check');

const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
const packages = lock.packages ?? {};

/** Lock key npm's resolution finds for `name` required from `from` (nested first, then each ancestor). */
function resolveKey(from, name) {
  let dir = from;
  for (;;) {
    const key = dir ? `${dir}/node_modules/${name}` : `node_modules/${name}`;
    if (packages[key]) return key;
    if (!dir) return undefined;
    const i = dir.lastIndexOf('/node_modules/');
    dir = i < 0 ? '' : dir.slice(0, i);
  }
}

function npmView(spec) {
  const r = spawnSync('npm', ['view', spec, '--json'], { encoding: 'utf8', cwd: root });
  if (r.status !== 0) return undefined;
  try {
    const out = JSON.parse(r.stdout);
    return Array.isArray(out) ? out[out.length - 1] : out;
  } catch {
    return undefined;
  }
}

const OS = ['darwin', 'linux', 'win32', 'freebsd', 'openbsd', 'android', 'sunos', 'aix'];
const CPU = {
  x64: 'x64',
  amd64: 'x64',
  arm64: 'arm64',
  aarch64: 'arm64',
  arm: 'arm',
  ia32: 'ia32',
  ppc64: 'ppc64',
  s390x: 's390x',
  riscv64: 'riscv64',
};
const LIBC = { gnu: 'glibc', gnueabihf: 'glibc', musl: 'musl' };

/** Platform fields from a name like `@swc/core-linux-arm64-musl` or `@foundry-rs/anvil-win32-amd64`. */
function platformFromName(name) {
  const re = new RegExp(`-(${OS.join('|')})-(${Object.keys(CPU).join('|')})(?:-(gnu|gnueabihf|musl|msvc))?$`);
  const m = re.exec(name);
  if (!m) return undefined;
  return { os: [m[1]], cpu: [CPU[m[2]]], ...(m[3] && LIBC[m[3]] ? { libc: [LIBC[m[3]]] } : {}) };
}

/** npm's lockfile form of `bin`: paths without a leading `./`. */
const lockBin = (bin) => bin && Object.fromEntries(Object.entries(bin).map(([k, v]) => [k, v.replace(/^\.\//, '')]));

function entryFrom(meta, version, integrity) {
  return {
    version,
    ...(integrity ? { integrity } : {}),
    ...(meta.cpu ? { cpu: [].concat(meta.cpu) } : {}),
    ...(meta.libc ? { libc: [].concat(meta.libc) } : {}),
    ...(meta.license ? { license: meta.license } : {}),
    optional: true,
    ...(meta.os ? { os: [].concat(meta.os) } : {}),
    ...(meta.bin ? { bin: lockBin(meta.bin) } : {}),
    ...(meta.engines ? { engines: meta.engines } : {}),
  };
}

function fromSibling(parentKey, name, version) {
  const platform = platformFromName(name);
  if (!platform) return undefined;
  const siblings = Object.keys(packages[parentKey].optionalDependencies ?? {})
    .map((n) => resolveKey(parentKey, n))
    .filter((k) => k && packages[k].os);
  const sib = siblings[0] ? packages[siblings[0]] : {};
  // A sibling's bins point at the same tool; Windows builds carry `.exe`.
  const bin =
    sib.bin &&
    Object.fromEntries(
      Object.entries(sib.bin).map(([k, v]) => {
        const base = v.replace(/\.exe$/, '');
        return [k, platform.os[0] === 'win32' ? `${base}.exe` : base];
      }),
    );
  return entryFrom({ ...platform, license: sib.license, engines: sib.engines, bin }, version);
}

const missing = [];
for (const [key, entry] of Object.entries(packages)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    if (!resolveKey(key, name)) missing.push({ parentKey: key, name, spec });
  }
}

if (check) {
  for (const m of missing) console.log(`missing: ${m.name}@${m.spec} (optional dependency of ${m.parentKey || 'the project'})`);
  if (missing.length) console.log('run `node scripts/lockfile-platforms.mjs` and commit package-lock.json');
  process.exit(missing.length ? 1 : 0);
}

for (const { parentKey, name, spec } of missing) {
  const parent = packages[parentKey];
  let entry;
  let source;
  const exact = npmView(`${name}@${spec}`);
  if (exact) {
    entry = entryFrom(exact, exact.version, exact.dist?.integrity);
    source = `registry, ${exact.version}`;
  } else {
    const latest = npmView(name);
    const version = /^\d+\.\d+\.\d+(-[\w.]+)?$/.test(spec) ? spec : undefined;
    if (!version) throw new Error(`${name}@${spec}: the registry has no such version, and the spec is not an exact version`);
    if (latest) {
      entry = entryFrom(latest, version);
      source = `platform fields of ${latest.version} from the registry (${version} is not served)`;
    } else {
      entry = fromSibling(parentKey, name, version);
      source = 'platform fields from the package name, license/engines/bin from a sibling (not served)';
    }
    if (!entry) throw new Error(`${name}@${spec}: not served and its name names no platform; add its entry by hand`);
  }
  if (parent.dev) entry.dev = true;
  else if (parent.devOptional) entry.devOptional = true;
  packages[`node_modules/${name}`] = entry;
  console.log(`added node_modules/${name}@${entry.version} (${source})`);
}

// npm keeps `packages` sorted by key.
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b, 'en'))));
fs.writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(missing.length ? `package-lock.json: ${missing.length} entries added` : 'package-lock.json: nothing missing');
