import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { parse } from 'yaml';
import {
  CLUSTER_ROLES,
  clusterConfigYaml,
  clusterMembers,
  clusterPorts,
  MAX_HISTORY_PROCESSES,
  memberName,
  memberPorts,
} from '../../src/embedded/temporal-cluster-config';

const input = (frontendPort: number, historyShards = 16) => ({
  postgres: { host: '127.0.0.1', port: 54329, user: 'postgres', password: '' },
  historyShards,
  frontendPort,
  databases: { default: 'sim_temporal', visibility: 'sim_temporal_visibility' },
});

describe('Temporal cluster configuration', () => {
  test('each role listens on loopback ports of its own, gRPC and membership all distinct', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1127, max: 32_767 }), (frontend) => {
        const ports = clusterPorts(frontend);
        const all = CLUSTER_ROLES.flatMap((r) => [ports[r].grpc, ports[r].membership]);
        assert.equal(new Set(all).size, 8);
        assert.equal(ports.frontend.grpc, frontend);
        assert.ok(all.every((p) => Math.abs(p - frontend) <= 103));
        // Temporal stores a membership port as a PostgreSQL smallint: above 32767 a role can't start.
        assert.ok(
          all.every((p) => p >= 1024 && p <= 32_767),
          `ports ${all.join(', ')}`,
        );
      }),
    );
  });

  test('a frontend port above 32767 is refused, and one near it counts its roles down', () => {
    assert.throws(() => clusterPorts(40_000), /32767/);
    assert.deepEqual(clusterPorts(32_767).worker, { grpc: 32_764, membership: 32_664 });
  });

  test('the YAML names PostgreSQL 12 stores for both databases, the shard count, and the frontend as the cluster address', () => {
    const config = parse(clusterConfigYaml(input(17233, 32)));
    assert.equal(config.persistence.numHistoryShards, 32);
    assert.equal(config.persistence.datastores['postgres-default'].sql.pluginName, 'postgres12');
    assert.equal(config.persistence.datastores['postgres-default'].sql.databaseName, 'sim_temporal');
    assert.equal(config.persistence.datastores['postgres-visibility'].sql.databaseName, 'sim_temporal_visibility');
    assert.equal(config.persistence.datastores['postgres-default'].sql.connectAddr, '127.0.0.1:54329');
    assert.deepEqual(Object.keys(config.services).sort(), [...CLUSTER_ROLES].sort());
    for (const role of CLUSTER_ROLES) assert.equal(config.services[role].rpc.bindOnLocalHost, true, `${role} on loopback only`);
    assert.equal(config.clusterMetadata.clusterInformation.active.rpcAddress, '127.0.0.1:17233');
  });

  test('several history processes each get ports of their own, distinct from every role', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1127, max: 32_767 }), (frontend) => {
        const members = clusterMembers(MAX_HISTORY_PROCESSES);
        const all = members.flatMap((m) => Object.values(memberPorts(frontend, m)));
        assert.equal(new Set(all).size, 2 * members.length);
        assert.ok(
          all.every((p) => p >= 1024 && p <= 32_767),
          `ports ${all.join(', ')}`,
        );
      }),
    );
    assert.deepEqual(clusterMembers(2).map(memberName), ['frontend', 'history', 'history-2', 'matching', 'worker']);
  });

  test("a second history process's YAML carries its own ports in the history section, the rest unchanged", () => {
    const [second] = clusterMembers(2).filter((m) => m.instance === 2);
    const config = parse(clusterConfigYaml(input(17233), second));
    const own = memberPorts(17233, second!);
    assert.deepEqual(config.services.history.rpc, { grpcPort: own.grpc, membershipPort: own.membership, bindOnLocalHost: true });
    assert.equal(config.services.frontend.rpc.grpcPort, 17233);
  });
});
