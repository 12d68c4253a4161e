#!/usr/bin/env node
// Scripted, idempotent, cached toolchain set-up for the Partner Payments API.
//
//   node scripts/setup.mjs [--for start|test|stacks|bench|schemathesis|all]      (default: all)
//
// Plain Node ESM with no npm dependencies: it runs before node_modules exists. One module per step in
// scripts/setup/; versions and default ports come from config/toolchain.json. Every step prints one
// line with its duration; a failing step prints what is missing and how to fix it, and the script
// exits non-zero. Everything expensive is cached (and built under a lock, so concurrent set-ups never
// build the same thing twice), so a second run takes a second or two.
//
// Environment:
//   PARTNER_PAYMENTS_CACHE   tools built or fetched once per machine (default ~/.cache/partner-payments)
//   DATA_DIR                 project data (default <repo>/.data); set-up logs go to <data>/logs/
//   PGPORT_LOCAL             port of the project-local PostgreSQL cluster (default EMBEDDED_POSTGRES_PORT,
//                            else config/toolchain.json ports.postgres)
//   DATABASE_URL             when set, no local PostgreSQL is prepared
//   CHROMIUM_PATH            the browser the browser tests drive (default /usr/bin/chromium, apt-installed)
//   DOCKER_COMPOSE_PATH      the docker-compose that validates docker-compose.yml (default: on the PATH,
//                            apt-installed)

import { nodeDependencies } from './setup/node-dependencies.mjs';
import { postgresql } from './setup/postgresql.mjs';
import { prismaClient } from './setup/prisma-client.mjs';
import { chromium } from './setup/chromium.mjs';
import { dockerCompose } from './setup/docker-compose.mjs';
import { temporalCli } from './setup/temporal-cli.mjs';
import { temporalTestServer } from './setup/temporal-test-server.mjs';
import { temporalServer } from './setup/temporal-server.mjs';
import { schemathesis } from './setup/schemathesis.mjs';
import { fmtDuration, SetupError, toolchain } from './setup/util.mjs';

const TARGETS = ['start', 'test', 'stacks', 'bench', 'schemathesis', 'cluster', 'all'];

// Which targets need each step (`all` runs every step). `start` and `bench` run the dev server;
// `test` runs the time-skipping test server (and no Temporal CLI); `stacks` runs the suites with stacks of
// their own (npm run test:stacks: `npm start`, the short simulation, a crash cell) on the dev server;
// `schemathesis` runs `npm start` and the fuzzer against it (npm run fuzz:schemathesis); `cluster`
// runs a real Temporal cluster over PostgreSQL (npm run rehearsal, and --engine cluster).
const STEPS = [
  { name: 'node dependencies', for: ['start', 'test', 'stacks', 'bench', 'schemathesis', 'cluster'], run: nodeDependencies },
  { name: 'prisma client', for: ['start', 'test', 'stacks', 'bench', 'schemathesis', 'cluster'], run: prismaClient },
  { name: `temporal test server ${toolchain.temporalTestServer.version}`, for: ['test', 'stacks'], run: temporalTestServer },
  { name: `temporal CLI ${toolchain.temporalCli.version}`, for: ['start', 'stacks', 'bench', 'schemathesis'], run: temporalCli },
  { name: `temporal server ${toolchain.temporalServer.version}`, for: ['cluster'], run: temporalServer },
  { name: 'postgresql', for: ['start', 'test', 'stacks', 'bench', 'schemathesis', 'cluster'], run: postgresql },
  { name: 'chromium', for: ['test'], run: chromium },
  { name: 'docker-compose', for: ['test'], run: dockerCompose },
  { name: `schemathesis ${toolchain.schemathesis.version}`, for: ['schemathesis'], run: schemathesis },
];

function usage(to = console.log) {
  to(`usage: node scripts/setup.mjs [--for ${TARGETS.join('|')}]`);
}

function parseArgs(argv) {
  let target = 'all';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--for') target = argv[++i] ?? '';
    else if (a.startsWith('--for=')) target = a.slice('--for='.length);
    else if (a === '-h' || a === '--help') {
      usage();
      process.exit(0);
    } else {
      console.error(`setup: unknown argument ${a}`);
      usage(console.error);
      process.exit(2);
    }
  }
  if (!TARGETS.includes(target)) {
    console.error(`setup: --for must be ${TARGETS.join(', ')} (got "${target}")`);
    process.exit(2);
  }
  return target;
}

async function main() {
  const target = parseArgs(process.argv.slice(2));
  const t0 = Date.now();
  const tty = process.stdout.isTTY;
  for (const step of STEPS.filter((s) => target === 'all' || s.for.includes(target))) {
    const start = Date.now();
    const head = `setup: ${step.name} ... `;
    if (tty) process.stdout.write(head);
    try {
      const r = (await step.run()) || {};
      const extra = [fmtDuration(Date.now() - start), r.cached ? 'cached' : '', r.note || ''].filter(Boolean).join(', ');
      process.stdout.write(`${tty ? '' : head}${r.skipped ? 'skipped' : 'ok'} (${extra})\n`);
    } catch (err) {
      process.stdout.write(`${tty ? '' : head}FAILED (${fmtDuration(Date.now() - start)})\n`);
      if (err instanceof SetupError) {
        console.error(`setup: ${step.name}: ${err.message}`);
        for (const f of err.fix) console.error(`  fix: ${f}`);
      } else {
        console.error(`setup: ${step.name}: ${err && err.stack ? err.stack : err}`);
      }
      process.exit(1);
    }
  }
  console.log(`setup: done for --for ${target} in ${fmtDuration(Date.now() - t0)}`);
}

main().catch((err) => {
  console.error(`setup: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
});
