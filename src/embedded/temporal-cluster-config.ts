import { stringify } from 'yaml';

/** The four roles of a Temporal cluster, each run as its own process. */
export const CLUSTER_ROLES = ['frontend', 'history', 'matching', 'worker'] as const;
export type ClusterRole = (typeof CLUSTER_ROLES)[number];

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
  const step = frontendPort + 103 <= MAX_CLUSTER_PORT ? 1 : -1;
  return Object.fromEntries(
    CLUSTER_ROLES.map((role) => {
      const grpc = frontendPort + step * offsets[role];
      return [role, { grpc, membership: grpc + step * 100 }];
    }),
  ) as Record<ClusterRole, { grpc: number; membership: number }>;
}

/** Temporal Server's static configuration (its YAML), one file for every role of the cluster. */
export function clusterConfig(input: ClusterConfigInput): Record<string, unknown> {
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
      CLUSTER_ROLES.map((role) => [
        role,
        { rpc: { grpcPort: ports[role].grpc, membershipPort: ports[role].membership, bindOnLocalHost: true } },
      ]),
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

export function clusterConfigYaml(input: ClusterConfigInput): string {
  return stringify(clusterConfig(input));
}
