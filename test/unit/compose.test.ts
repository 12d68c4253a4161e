import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { projectRoot } from '../../src/embedded/paths';
import { loadConfig } from '../../src/config';
import { loadEnvironmentsReport } from '../../src/config/environments';
import { productionConfigProblems } from '../../src/config/production-check';

type Service = {
  environment?: Record<string, string>;
  ports?: unknown[];
  secrets?: (string | { source: string; target?: string })[];
  volumes?: (string | { type?: string; source?: string; target: string })[];
  networks?: string[] | Record<string, unknown>;
};
type Compose = {
  services: Record<string, Service>;
  secrets?: Record<string, { file?: string; environment?: string }>;
  volumes?: Record<string, unknown>;
  networks?: Record<string, { internal?: boolean } | null>;
};

/** docker-compose.yml as Compose reads it (anchors and `<<` merges resolved). */
function compose(): Compose {
  return parse(readFileSync(path.join(projectRoot(), 'docker-compose.yml'), 'utf8'), { merge: true }) as Compose;
}

const networksOf = (s: Service): string[] => (Array.isArray(s.networks) ? s.networks : Object.keys(s.networks ?? { default: null }));
const secretNames = (s: Service): string[] => (s.secrets ?? []).map((x) => (typeof x === 'string' ? x : x.source));

describe('docker-compose.yml, the production shape', () => {
  test('the custody seed is a secret mounted into the worker alone, read through CUSTODY_MNEMONIC_FILE', () => {
    const c = compose();
    const seedSecrets = Object.keys(c.secrets ?? {});
    assert.equal(seedSecrets.length >= 1, true, 'a top-level secrets: entry holds the seed');
    const worker = c.services.worker!;
    const [mounted] = secretNames(worker);
    assert.ok(mounted && seedSecrets.includes(mounted), 'the worker mounts the seed secret');
    assert.equal(worker.environment?.CUSTODY_MNEMONIC_FILE, `/run/secrets/${mounted}`);
    for (const [name, service] of Object.entries(c.services)) {
      assert.equal(service.environment?.CUSTODY_MNEMONIC, undefined, `${name}: no mnemonic in the environment`);
      if (name === 'worker') continue;
      assert.deepEqual(secretNames(service), [], `${name} mounts no secret`);
      assert.equal(service.environment?.CUSTODY_MNEMONIC_FILE, undefined, `${name} reads no seed`);
    }
  });

  test('the API gets the public keys, and both roles run as production', () => {
    const c = compose();
    assert.match(c.services.api!.environment?.CUSTODY_PUBLIC_KEYS ?? '', /CUSTODY_PUBLIC_KEYS/);
    // The worker checks its seed against the same keys: a secret and a setting that disagree stop it.
    assert.equal(c.services.worker!.environment?.CUSTODY_PUBLIC_KEYS, c.services.api!.environment?.CUSTODY_PUBLIC_KEYS);
    for (const name of ['api', 'worker', 'migrate']) assert.equal(c.services[name]!.environment?.DEPLOYMENT, 'production', name);
  });

  test('data lives on named volumes', () => {
    const c = compose();
    const named = Object.keys(c.volumes ?? {});
    const mountsOf = (s: Service) =>
      (s.volumes ?? []).map((v) =>
        typeof v === 'string' ? { source: v.split(':')[0]!, target: v.split(':')[1] } : { source: v.source ?? '', target: v.target },
      );
    for (const [name, target] of [
      ['postgres', '/var/lib/postgresql/data'],
      ['temporal-postgres', '/var/lib/postgresql/data'],
      ['worker', '/app/.data'],
    ] as const) {
      const mount = mountsOf(c.services[name]!).find((m) => m.target === target);
      assert.ok(mount, `${name} keeps ${target} on a volume`);
      assert.ok(named.includes(mount.source), `${name}: ${mount.source} is a named volume`);
    }
    for (const [name, service] of Object.entries(c.services)) {
      for (const mount of mountsOf(service))
        assert.ok(named.includes(mount.source), `${name}: ${mount.source} is a named volume, not a host path`);
    }
  });

  test('Temporal and its UI are on an internal network with no host ports, the UI read-only', () => {
    const c = compose();
    for (const name of ['temporal', 'temporal-ui', 'temporal-postgres']) {
      const service = c.services[name]!;
      assert.equal(service.ports, undefined, `${name} publishes no port`);
      const networks = networksOf(service);
      assert.ok(networks.length > 0);
      for (const network of networks) assert.equal(c.networks?.[network]?.internal, true, `${name}: ${network} is internal`);
    }
    assert.equal(String(c.services['temporal-ui']!.environment?.TEMPORAL_DISABLE_WRITE_ACTIONS), 'true');
    // The roles reach Temporal over that network.
    const temporalNetworks = networksOf(c.services.temporal!);
    for (const name of ['api', 'worker'])
      assert.ok(
        networksOf(c.services[name]!).some((n) => temporalNetworks.includes(n)),
        `${name} reaches Temporal`,
      );
  });

  test('each role as compose configures it passes the production check, given the settings compose asks for', () => {
    const c = compose();
    // What an operator supplies for each ${NAME:?...}; a ${NAME:-default} keeps its default.
    const supplied = (name: string) =>
      name.startsWith('RPC_URLS_')
        ? 'https://rpc-1.example/key,https://rpc-2.example'
        : name === 'PUBLIC_BASE_URL'
          ? 'https://pay.example.com'
          : 'x'.repeat(40);
    const resolve = (value: string) =>
      String(value).replace(/\$\{(\w+)(?::([?-])([^}]*))?\}/g, (_all, name: string, op?: string, rest?: string) =>
        op === '-' ? rest! : supplied(name),
      );
    for (const [name, roles] of [
      ['api', ['api']],
      ['worker', ['worker']],
    ] as const) {
      const env: NodeJS.ProcessEnv = Object.fromEntries(
        Object.entries(c.services[name]!.environment ?? {}).map(([k, v]) => [k, resolve(v)]),
      );
      // The image's /app is this project.
      env.ENVIRONMENTS_FILE = env.ENVIRONMENTS_FILE!.replace(/^\/app\//, `${projectRoot()}/`);
      const config = loadConfig(env);
      assert.equal(config.deployment, 'production');
      const report = loadEnvironmentsReport(config.environmentsFile, { rpcUrls: config.rpcUrls });
      assert.deepEqual(productionConfigProblems({ config, report, roles, env }), [], `${name} as compose starts it`);
    }
  });
});
