import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { projectRoot } from '../platform/project-root';
import { dataDir, requireTool, temporalServerDir } from './paths';
import {
  grpcCall,
  isPortOpen,
  protoField,
  spawnLogged,
  stopProcess,
  tailFile,
  temporalNamespaceReady,
  waitFor,
  WORKFLOW_SERVICE,
  type LoggedProcess,
} from './process';
import {
  clusterConfigYaml,
  clusterMembers,
  memberName,
  memberPorts,
  type ClusterConfigInput,
  type ClusterMember,
} from './temporal-cluster-config';

/**
 * A real Temporal cluster on one machine: Temporal Server (built by `scripts/setup.mjs --for cluster`)
 * over PostgreSQL, its frontend, history, matching and worker roles each a process of its own on
 * loopback ports, as a production deployment runs them. Its schemas are created with the release's
 * own SQL tool from the release's versioned schema files.
 */

/**
 * History shards: fixed for the cluster's life. 16 spreads this machine's load (tens of workflow
 * transitions a second per shard are cheap; each shard also costs idle polling on 2 cores); a
 * production cluster picks its count from its peak load, once (docs/decisions/testing-and-tooling.md).
 */
export const DEFAULT_HISTORY_SHARDS = 16;

export interface TemporalClusterOptions {
  postgres: { host: string; port: number; user: string; password?: string };
  frontendPort: number;
  historyShards?: number;
  /** History processes sharing the shards (default 1); killing one hands its shards to the others. */
  historyProcesses?: number;
  /** Database names (default temporal, temporal_visibility). */
  databases?: { default: string; visibility: string };
  /** Drop both databases first: a cluster with no history. */
  fresh?: boolean;
  /** Where the config and logs go (default `<data>/temporal-cluster`). */
  dir?: string;
  /** How long to wait for the frontend to answer (default 120 s). */
  startTimeoutMs?: number;
}

export interface TemporalCluster {
  /** `127.0.0.1:<frontendPort>`, for Connection.connect / NativeConnection.connect. */
  address: string;
  historyShards: number;
  /** The processes by name (`frontend`, `history`, `history-2`, `matching`, `worker`), in start order. */
  members: string[];
  /** The process of each member (a role's name is its first process), e.g. to SIGKILL it in a rehearsal. */
  pid(member: string): number | undefined;
  kill(member: string): void;
  /** Starts a member again (after kill) and waits until the frontend serves the namespace. */
  restart(member: string): Promise<void>;
  stop(): Promise<void>;
}

/** A cluster's PostgreSQL connection settings, from the service's DATABASE_URL (the same server). */
export function clusterPostgresOf(databaseUrl: string): TemporalClusterOptions['postgres'] {
  const url = new URL(databaseUrl);
  return { host: url.hostname, port: Number(url.port), user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
}

export async function startTemporalCluster(options: TemporalClusterOptions): Promise<TemporalCluster> {
  const home = temporalServerDir();
  const server = serverBinary(home);
  const dir = options.dir ?? path.join(dataDir(), 'temporal-cluster');
  const databases = options.databases ?? { default: 'temporal', visibility: 'temporal_visibility' };
  const historyShards = options.historyShards ?? DEFAULT_HISTORY_SHARDS;
  const input: ClusterConfigInput = {
    postgres: { ...options.postgres, password: options.postgres.password ?? '' },
    historyShards,
    frontendPort: options.frontendPort,
    databases,
  };
  await createSchemas(home, input, options.fresh ?? false);
  const members = new Map(clusterMembers(options.historyProcesses ?? 1).map((m) => [memberName(m), m] as const));
  const configFiles = writeConfigFiles(dir, input, members);

  const processes = new Map<string, LoggedProcess>();
  const timeoutMs = options.startTimeoutMs ?? 120_000;
  const memberOf = (name: string) => knownMember(members, name);
  const spawnMember = (name: string) => {
    const args = ['--config-file', configFiles.get(name)!, '--allow-no-auth', 'start', '--service', memberOf(name).role];
    const proc = spawnLogged(server, args, { log: path.join(dir, 'logs', `${name}.log`), detached: true });
    processes.set(name, proc);
    return proc;
  };
  // One role at a time, each until its gRPC port answers: roles started together on a new database race
  // to write the cluster's metadata, and the losers exit. A role that exits while starting is started
  // again, as an orchestrator restarts a pod.
  const start = async (name: string) => {
    const port = memberPorts(options.frontendPort, memberOf(name)).grpc;
    for (let attempt = 1; ; attempt += 1) {
      const proc = spawnMember(name);
      try {
        await waitFor(() => isPortOpen(port), {
          timeoutMs,
          intervalMs: 200,
          isAlive: () => !proc.exited(),
          what: `the ${name} process's gRPC port ${port}`,
        });
        return;
      } catch (err) {
        if (!proc.exited() || attempt >= ROLE_START_ATTEMPTS)
          throw new Error(`${(err as Error).message}; last lines of ${proc.logFile}:\n${tailFile(proc.logFile, 8)}`);
      }
    }
  };
  const killAll = () => {
    for (const p of processes.values()) if (!p.exited()) p.child.kill('SIGKILL');
  };
  process.once('exit', killAll);
  const address = `127.0.0.1:${options.frontendPort}`;
  const ready = () => waitForNamespace(options.frontendPort, 'default', processes, timeoutMs);
  try {
    for (const name of members.keys()) await start(name);
    await ready();
  } catch (err) {
    killAll();
    throw err;
  }
  return {
    address,
    historyShards,
    members: [...members.keys()],
    pid: (name) => processes.get(name)?.child.pid,
    kill: (name) => {
      const p = processes.get(memberName(memberOf(name)));
      if (p && !p.exited()) p.child.kill('SIGKILL');
    },
    async restart(name) {
      const p = processes.get(memberName(memberOf(name)));
      if (p && !p.exited()) await stopProcess(p, { signal: 'SIGKILL' });
      await start(name);
      await ready();
    },
    async stop() {
      process.removeListener('exit', killAll);
      await Promise.all([...processes.values()].map((p) => stopProcess(p, { timeoutMs: 15_000 })));
    },
  };
}

function knownMember(members: Map<string, ClusterMember>, name: string): ClusterMember {
  const m = members.get(name);
  if (!m) throw new Error(`no cluster member ${name}; the members are ${[...members.keys()].join(', ')}`);
  return m;
}

/** Temporal Server's binary, built once per machine by the first command that runs a cluster (about 8 minutes). */
function serverBinary(home: string): string {
  if (!existsSync(path.join(home, 'server'))) {
    const setup = spawnSync(process.execPath, [path.join(projectRoot(), 'scripts', 'setup.mjs'), '--for', 'cluster'], { stdio: 'inherit' });
    if (setup.status !== 0) throw new Error('set-up of Temporal Server (node scripts/setup.mjs --for cluster) failed');
  }
  return requireTool(path.join(home, 'server'), 'Temporal Server', 'cluster');
}

/** The first process of each role shares cluster.yaml; another history process has a file for its own ports. */
function writeConfigFiles(dir: string, input: ClusterConfigInput, members: Map<string, ClusterMember>): Map<string, string> {
  mkdirSync(dir, { recursive: true });
  const files = new Map<string, string>();
  for (const [name, member] of members) {
    const file = path.join(dir, member.instance === 1 ? 'cluster.yaml' : `cluster-${name}.yaml`);
    writeFileSync(file, clusterConfigYaml(input, member.instance === 1 ? undefined : member));
    files.set(name, file);
  }
  return files;
}

/**
 * Until the frontend serves the namespace: registered (7 days' retention) once the frontend answers,
 * then described. Fails at once when a role exits.
 */
async function waitForNamespace(port: number, namespace: string, processes: Map<string, LoggedProcess>, timeoutMs: number): Promise<void> {
  const register = protoField(1, namespace);
  const retention = protoField(4, Buffer.from([0x08, ...varint(RETENTION_SECONDS)]));
  try {
    await waitFor(
      async () => {
        if (await temporalNamespaceReady(port, namespace)) return true;
        const r = await grpcCall(port, `${WORKFLOW_SERVICE}/RegisterNamespace`, Buffer.concat([register, retention]));
        return r.ok || r.status === GRPC_ALREADY_EXISTS ? temporalNamespaceReady(port, namespace) : false;
      },
      {
        timeoutMs,
        intervalMs: 500,
        isAlive: () => [...processes.values()].every((p) => !p.exited()),
        what: `namespace ${namespace} on the Temporal cluster at port ${port}`,
      },
    );
  } catch (err) {
    const logs = [...processes.entries()].map(([role, p]) => `${role} (${p.logFile}):\n${tailFile(p.logFile, 8)}`).join('\n');
    throw new Error(`${(err as Error).message}\n${logs}`);
  }
}

const RETENTION_SECONDS = 7 * 24 * 3600;
const ROLE_START_ATTEMPTS = 3;
const GRPC_ALREADY_EXISTS = 6;

/** protobuf varint of a non-negative integer. */
function varint(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return out;
}

/**
 * Both databases with the release's schemas: created (dropped first when fresh), set up at version
 * 0.0 when new, then brought to the release's latest version; run again, it changes nothing.
 */
async function createSchemas(home: string, input: ClusterConfigInput, fresh: boolean): Promise<void> {
  const tool = requireTool(path.join(home, 'sql'), "Temporal Server's SQL tool", 'cluster');
  for (const [db, schema] of [
    [input.databases.default, 'temporal'],
    [input.databases.visibility, 'visibility'],
  ] as const) {
    const isNew = await ensureDatabase(input.postgres, db, fresh);
    const sql = (...args: string[]) => runSqlTool(tool, input.postgres, db, args);
    if (isNew) sql('setup-schema', '-v', '0.0');
    sql('update-schema', '-d', path.join(home, 'schema', 'postgresql', 'v12', schema, 'versioned'));
  }
}

/** Creates the database unless it exists (dropping it first when fresh); answers whether it has no schema yet. */
async function ensureDatabase(pgOptions: ClusterConfigInput['postgres'], name: string, fresh: boolean): Promise<boolean> {
  const admin = new pg.Client({ ...pgOptions, database: 'postgres' });
  await admin.connect();
  try {
    const ident = `"${name.replace(/"/g, '""')}"`;
    if (fresh) await admin.query(`DROP DATABASE IF EXISTS ${ident} WITH (FORCE)`);
    const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
    if (!exists) await admin.query(`CREATE DATABASE ${ident}`);
  } finally {
    await admin.end();
  }
  const db = new pg.Client({ ...pgOptions, database: name });
  await db.connect();
  try {
    const { rows } = await db.query<{ t: string | null }>(`SELECT to_regclass('public.schema_version')::text AS t`);
    return rows[0]?.t == null;
  } finally {
    await db.end();
  }
}

function runSqlTool(tool: string, pgOptions: ClusterConfigInput['postgres'], db: string, args: string[]): void {
  const conn = [
    '--plugin',
    'postgres12',
    '--ep',
    pgOptions.host,
    '-p',
    String(pgOptions.port),
    '-u',
    pgOptions.user,
    '--pw',
    pgOptions.password,
    '--db',
    db,
  ];
  const r = spawnSync(tool, [...conn, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`temporal sql tool ${args[0]} on ${db} failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
}
