// Step: Temporal's Java time-skipping test server (tests only). Maven fetches the version pinned in
// config/toolchain.json (tools/temporal-test-server/pom.xml takes it as -Dtemporal.test-server.version),
// then a training run records an AppCDS archive and a wrapper script starts the JVM fast:
// <cache>/temporal-test-server-<version>-<pom hash>/temporal-test-server <port>.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http2 from 'node:http2';
import path from 'node:path';
import {
  aptInstall,
  aptInstallHint,
  exists,
  fmtDuration,
  freePort,
  logFile,
  readIf,
  runOrFail,
  SetupError,
  sha256,
  sleep,
  tail,
  TEST_SERVER_POM,
  testServerDir,
  toolchain,
  which,
  withLock,
} from './util.mjs';

// The SDK gives the server 5 seconds to answer: C1 only, serial GC, no perf data, quiet CDS logging.
const JVM_FAST_FLAGS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-XX:-UsePerfData', '-Xlog:cds=off', '-Xlog:cds+dynamic=off'];
const WORKFLOW_SERVICE = '/temporal.api.workflowservice.v1.WorkflowService';
const TEST_SERVICE = '/temporal.api.testservice.v1.TestService';

/**
 * One unary gRPC call over plain HTTP/2 (no dependencies). `body` is the serialized protobuf message.
 * Resolves { ok, status } where status is the grpc-status (0 = OK), or { ok:false, error }.
 */
function grpcCall(port, method, body = Buffer.alloc(0), timeoutMs = 3000) {
  return new Promise((resolve) => {
    let settled = false;
    const client = http2.connect(`http://127.0.0.1:${port}`);
    const done = (result) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done({ ok: false, error: 'timeout' }), timeoutMs);
    client.on('error', (err) => done({ ok: false, error: err.message }));
    const req = client.request({ ':method': 'POST', ':path': method, 'content-type': 'application/grpc', te: 'trailers' });
    let status;
    req.on('response', (h) => {
      if (h['grpc-status'] !== undefined) status = String(h['grpc-status']);
    });
    req.on('trailers', (h) => {
      if (h['grpc-status'] !== undefined) status = String(h['grpc-status']);
    });
    req.on('data', () => {});
    req.on('end', () => done({ ok: status === '0', status }));
    req.on('error', (err) => done({ ok: false, error: err.message }));
    const frame = Buffer.alloc(5 + body.length);
    frame.writeUInt32BE(body.length, 1);
    body.copy(frame, 5);
    req.end(frame);
  });
}

/** protobuf: length-delimited field (strings and sub-messages). */
function pbBytes(field, value) {
  const buf = Buffer.isBuffer(value) ? value : Buffer.from(value, 'utf8');
  const varint = [];
  let n = buf.length;
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    varint.push(b);
  } while (n);
  return Buffer.concat([Buffer.from([(field << 3) | 2, ...varint]), buf]);
}

async function waitForGrpc(port, { timeoutMs, isAlive }) {
  const start = Date.now();
  for (;;) {
    const r = await grpcCall(port, `${WORKFLOW_SERVICE}/GetSystemInfo`, Buffer.alloc(0), 2000);
    if (r.ok) return Date.now() - start;
    if (isAlive && !isAlive()) throw new Error('process exited before answering');
    if (Date.now() - start > timeoutMs)
      throw new Error(`no gRPC answer on port ${port} after ${timeoutMs} ms (${r.error || `grpc-status ${r.status}`})`);
    await sleep(25);
  }
}

function javaIdentity(java) {
  const real = fs.realpathSync(java);
  const release = readIf(path.join(path.dirname(path.dirname(real)), 'release')) || '';
  return `${real}\n${release}`;
}

/** Exercises the test server over gRPC so the AppCDS archive holds the classes the SDK needs. */
async function trainTestServer(port) {
  const ns = pbBytes(1, 'default');
  const execution = Buffer.concat([ns, pbBytes(2, pbBytes(1, 'setup-warmup'))]);
  const calls = [
    [`${WORKFLOW_SERVICE}/GetSystemInfo`, Buffer.alloc(0)],
    [`${WORKFLOW_SERVICE}/GetClusterInfo`, Buffer.alloc(0)],
    [`${WORKFLOW_SERVICE}/DescribeNamespace`, ns],
    [`${TEST_SERVICE}/GetCurrentTime`, Buffer.alloc(0)],
    [`${TEST_SERVICE}/LockTimeSkipping`, Buffer.alloc(0)],
    [`${TEST_SERVICE}/UnlockTimeSkipping`, Buffer.alloc(0)],
    // StartWorkflowExecution{namespace, workflow_id, workflow_type{name}, task_queue{name}, identity, request_id}
    [
      `${WORKFLOW_SERVICE}/StartWorkflowExecution`,
      Buffer.concat([
        ns,
        pbBytes(2, 'setup-warmup'),
        pbBytes(3, pbBytes(1, 'warmup')),
        pbBytes(4, pbBytes(1, 'setup-warmup')),
        pbBytes(9, 'setup'),
        pbBytes(10, '00000000-0000-4000-8000-000000000000'),
      ]),
    ],
    // {namespace, execution{workflow_id}}
    [`${WORKFLOW_SERVICE}/DescribeWorkflowExecution`, execution],
    [`${WORKFLOW_SERVICE}/GetWorkflowExecutionHistory`, execution],
    [`${WORKFLOW_SERVICE}/TerminateWorkflowExecution`, execution],
  ];
  for (let round = 0; round < 2; round++) {
    for (const [method, body] of calls) await grpcCall(port, method, body, 5000);
  }
}

function stopChild(child, timeoutMs = 20_000) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Starts `cmd args` (port appended) and returns ms until GetSystemInfo answers; leaves it running. */
async function startAndTime(cmd, args, port, log) {
  const fd = fs.openSync(log, 'a');
  const start = Date.now();
  const child = spawn(cmd, [...args, String(port)], { stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  let exited = false;
  child.on('exit', () => {
    exited = true;
  });
  child.on('error', () => {
    exited = true;
  });
  try {
    await waitForGrpc(port, { timeoutMs: 60_000, isAlive: () => !exited });
  } catch (err) {
    await stopChild(child);
    throw new SetupError(
      `the test server did not start: ${err.message}; last lines of ${log}:\n${tail(log)}`,
      ['check that `java -version` reports Java 17 or newer'],
      log,
    );
  }
  return { child, port, ms: Date.now() - start };
}

function wrapperScript({ version, java, dir, jars }) {
  const cp = jars.map((j) => path.join(dir, 'lib', j)).join(':');
  return `#!/bin/sh
# Generated by scripts/setup/temporal-test-server.mjs: Temporal's Java time-skipping test server ${version}.
# Usage: temporal-test-server <port> [--enable-time-skipping]
# Fast JVM start-up (the Temporal SDK gives the server 5 seconds to answer): C1 only, serial GC and an
# AppCDS archive (cds.jsa) recorded at set-up time. The class path is listed explicitly (sorted) so it
# always matches the one the archive was recorded with.
DIR='${dir}'
CDS=""
if [ -f "$DIR/cds.jsa" ]; then CDS="-XX:SharedArchiveFile=$DIR/cds.jsa -Xshare:auto"; fi
exec '${java}' ${JVM_FAST_FLAGS.join(' ')} $CDS -cp '${cp}' io.temporal.testserver.TestServer "$@"
`;
}

export async function temporalTestServer() {
  if (!exists(TEST_SERVER_POM)) throw new SetupError('tools/temporal-test-server/pom.xml is missing', ['restore it from git']);
  const version = toolchain.temporalTestServer.version;
  const dir = testServerDir();
  const wrapper = path.join(dir, 'temporal-test-server');
  const log = logFile('temporal-test-server');

  let java = which('java');
  let mvn = which('mvn');
  const stampFile = path.join(dir, '.setup-stamp');
  const want = () => sha256(`${version}\n${javaIdentity(java)}\n${wrapperScript({ version, java, dir, jars: [] })}`);
  const isDone = () => Boolean(java) && readIf(stampFile) === want() && exists(wrapper) && exists(path.join(dir, 'cds.jsa'));
  if (isDone()) return { cached: true };
  return withLock(`${dir}.lock`, isDone, async () => {
    if (!java || !mvn) {
      const installed = await aptInstall(['default-jre-headless', 'maven'], log);
      java = which('java');
      mvn = which('mvn');
      if (!installed || !java || !mvn) {
        throw new SetupError(`${!java ? 'java' : 'mvn'} is not on PATH (needed to fetch and run Temporal's Java test server)`, [
          aptInstallHint('default-jre-headless maven'),
          'or install any Java 17+ JRE and Apache Maven 3.6+ and put `java` and `mvn` on PATH',
        ]);
      }
    }

    // Fetch the jars into a temporary folder, then move it into place (safe against concurrent runs).
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    const tmp = `${dir}.tmp-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    await runOrFail(
      'mvn dependency:copy-dependencies',
      mvn,
      [
        '-q',
        '-B',
        '-f',
        TEST_SERVER_POM,
        `-Dtemporal.test-server.version=${version}`,
        'dependency:copy-dependencies',
        `-DoutputDirectory=${path.join(tmp, 'lib')}`,
      ],
      { log },
      [
        'check access to Maven Central (mvn help:effective-settings shows mirrors/proxies)',
        `the version in config/toolchain.json, io.temporal:temporal-test-server:${version}, must exist on Maven Central`,
      ],
    );
    const jars = fs
      .readdirSync(path.join(tmp, 'lib'))
      .filter((j) => j.endsWith('.jar'))
      .sort();
    if (!jars.some((j) => j.startsWith(`temporal-test-server-${version}`))) {
      throw new SetupError(`Maven did not fetch temporal-test-server-${version}.jar`, ['see ' + log]);
    }
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);

    // Write the wrapper without the archive first; record the AppCDS archive with a training run.
    fs.writeFileSync(wrapper, wrapperScript({ version, java, dir, jars }), { mode: 0o755 });
    const cp = jars.map((j) => path.join(dir, 'lib', j)).join(':');
    const archiveTmp = path.join(dir, `cds.jsa.tmp-${process.pid}`);
    const trainArgs = [...JVM_FAST_FLAGS, `-XX:ArchiveClassesAtExit=${archiveTmp}`, '-cp', cp, 'io.temporal.testserver.TestServer'];
    const cold = await startAndTime(java, trainArgs, await freePort(), log);
    await trainTestServer(cold.port);
    await stopChild(cold.child); // SIGTERM: the JVM writes the archive while exiting
    if (!exists(archiveTmp)) {
      throw new SetupError(`the JVM did not write the AppCDS archive; last lines of ${log}:\n${tail(log)}`, [
        'needs Java 13 or newer (java -version)',
      ]);
    }
    fs.renameSync(archiveTmp, path.join(dir, 'cds.jsa'));

    // Verify the wrapper (with the archive) and measure a warm start.
    const warm = await startAndTime(wrapper, [], await freePort(), log);
    await stopChild(warm.child);
    fs.writeFileSync(stampFile, want());
    return { note: `v${version}; answers gRPC in ${fmtDuration(cold.ms)} cold, ${fmtDuration(warm.ms)} with AppCDS` };
  });
}
