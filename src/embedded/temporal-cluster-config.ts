import { stringify } from 'yaml';

/** The four roles of a Temporal cluster, each run as its own process. */
export const CLUSTER_ROLES = ['frontend', 'history', 'matching', 'worker'] as const;
export type ClusterRole = (typeof CLUSTER_ROLES)[number];

/**
 * One process of the cluster: a role and which of that role's processes it is (1 for the first). A
 * second history process shares the shards with the first (ringpop hands a dead one's shards over).
 */
export interface ClusterMember {
  role: ClusterRole;
  instance: number;
}

/** `history` for the first history process, `history-2` for the second. */
export function memberName(member: ClusterMember): string {
  return member.instance === 1 ? member.role : `${member.role}-${member.instance}`;
}

/** The cluster's processes in start order: each role once, history `historyProcesses` times. */
export function clusterMembers(historyProcesses = 1): ClusterMember[] {
  return CLUSTER_ROLES.flatMap((role) =>
    Array.from({ length: role === 'history' ? historyProcesses : 1 }, (_, i): ClusterMember => ({ role, instance: i + 1 })),
  );
}

/** History processes beyond the first take the offsets after the four roles' (at most this many in all). */
export const MAX_HISTORY_PROCESSES = 4;

export interface ClusterConfigInput {
  postgres: { host: string; port: number; user: string; password: string };
  /** Fixed when the cluster's database is created: it can never change afterwards. */
  historyShards: number;
  /** The frontend's gRPC port; the other roles and membership ports follow it (see clusterPorts). */
  frontendPort: number;
  databases: { default: string; visibility: string };
}

/**
 * Loopback ports of each role: gRPC at frontendPort + offset, membership (ringpop) 100 beyond it.
 * Temporal stores membership ports in a PostgreSQL smallint, so every port stays at or below 32767:
 * near that top the roles count down from the frontend instead. The frontend's HTTP API is off.
 */
export const MAX_CLUSTER_PORT = 32_767;

export function clusterPorts(frontendPort: number): Record<ClusterRole, { grpc: number; membership: number }> {
  if (frontendPort < 1127 || frontendPort > MAX_CLUSTER_PORT) {
    throw new Error(
      `a Temporal cluster's frontend port must be 1127 to ${MAX_CLUSTER_PORT} (its membership ports are smallints), got ${frontendPort}`,
    );
  }
  const offsets: Record<ClusterRole, number> = { frontend: 0, history: 1, matching: 2, worker: 3 };
  const step = stepOf(frontendPort);
  return Object.fromEntries(
    CLUSTER_ROLES.map((role) => {
      const grpc = frontendPort + step * offsets[role];
      return [role, { grpc, membership: grpc + step * 100 }];
    }),
  ) as Record<ClusterRole, { grpc: number; membership: number }>;
}

/** Up from the frontend, or down when the span of every member's ports would pass 32767. */
const SPAN = 100 + 3 + MAX_HISTORY_PROCESSES - 1;
const stepOf = (frontendPort: number) => (frontendPort + SPAN <= MAX_CLUSTER_PORT ? 1 : -1);

/** A member's ports: its role's for the first process of a role, else the offsets after the four roles'. */
export function memberPorts(frontendPort: number, member: ClusterMember): { grpc: number; membership: number } {
  const ports = clusterPorts(frontendPort);
  if (member.instance === 1) return ports[member.role];
  if (member.role !== 'history' || member.instance > MAX_HISTORY_PROCESSES)
    throw new Error(`a cluster runs one ${member.role} process here and up to ${MAX_HISTORY_PROCESSES} history processes`);
  const step = stepOf(frontendPort);
  const grpc = frontendPort + step * (3 + member.instance - 1);
  return { grpc, membership: grpc + step * 100 };
}

/**
 * Temporal Server's static configuration (its YAML), one file for every role of the cluster; a
 * history process beyond the first gets its own file, with its own ports in the history section.
 */
export function clusterConfig(input: ClusterConfigInput, member?: ClusterMember): Record<string, unknown> {
  const store = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `${input.postgres.host}:${input.postgres.port}`,
      connectProtocol: 'tcp',
      user: input.postgres.user,
      password: input.postgres.password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const ports = clusterPorts(input.frontendPort);
  return {
    log: { stdout: true, level: 'warn' },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: input.historyShards,
      datastores: { 'postgres-default': store(input.databases.default, 20), 'postgres-visibility': store(input.databases.visibility, 4) },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' } },
    services: Object.fromEntries(
      CLUSTER_ROLES.map((role) => {
        const own = member?.role === role ? memberPorts(input.frontendPort, member) : ports[role];
        return [role, { rpc: { grpcPort: own.grpc, membershipPort: own.membership, bindOnLocalHost: true } }];
      }),
    ),
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: `127.0.0.1:${input.frontendPort}` },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
  };
}

export function clusterConfigYaml(input: ClusterConfigInput, member?: ClusterMember): string {
  return stringify(clusterConfig(input, member));
}
