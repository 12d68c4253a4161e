import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { projectRoot } from '../../src/platform/project-root';
import { DEFAULT_HISTORY_SHARDS } from '../../src/embedded/temporal-cluster';
import { CLUSTER_ROLES } from '../../src/embedded/temporal-cluster-config';
import { HISTORY_PROCESSES } from '../../simulate/rehearsal/stack';
import { loadConfig } from '../../src/config';
import { toolchain } from '../../src/config/toolchain';
import { loadEnvironmentsReport } from '../../src/config/environments';
import { productionConfigProblems } from '../../src/config/production-check';

type Service = {
  image?: string;
  build?: unknown;
  command?: string | string[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  restart?: string;
  environment?: Record<string, string>;
  ports?: unknown[];
  secrets?: (string | { source: string; target?: string })[];
  volumes?: (string | { type?: string; source?: string; target: string })[];
  networks?: string[] | Record<string, unknown>;
  cpu_shares?: number;
};
type Compose = {
  services: Record<string, Service>;
  secrets?: Record<string, { file?: string; environment?: string }>;
  volumes?: Record<string, unknown>;
  networks?: Record<string, { internal?: boolean } | null>;
};

const composeFile = () => path.join(projectRoot(), 'docker-compose.yml');

/** docker-compose.yml as Compose reads it (anchors and `<<` merges resolved). */
function compose(): Compose {
  return parse(readFileSync(composeFile(), 'utf8'), { merge: true }) as Compose;
}

const TEMPORAL_SERVER = 'temporalio/server';
const TEMPORAL_ADMIN_TOOLS = 'temporalio/admin-tools';
const imageName = (image: string) => image.slice(0, image.lastIndexOf(':'));
const imageTag = (image: string) => image.slice(image.lastIndexOf(':') + 1);

/** The services that run Temporal Server, by the one role each runs. */
function temporalRoles(c: Compose): Map<string, string[]> {
  const roles = new Map<string, string[]>();
  for (const [name, service] of Object.entries(c.services)) {
    if (!service.image || imageName(service.image) !== TEMPORAL_SERVER) continue;
    const role = service.environment?.TEMPORAL_SERVICES;
    assert.ok(role, `${name} names its role in TEMPORAL_SERVICES (without it the image starts every role)`);
    assert.doesNotMatch(role, /[,:\s]/, `${name} runs one role`);
    roles.set(role, [...(roles.get(role) ?? []), name]);
  }
  return roles;
}

const dependsOn = (s: Service): Record<string, { condition?: string }> =>
  Array.isArray(s.depends_on) ? Object.fromEntries(s.depends_on.map((d) => [d, {}])) : (s.depends_on ?? {});

const commandText = (s: Service) => (Array.isArray(s.command) ? s.command.join(' ') : (s.command ?? ''));

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

  test('no database password has a default, and the API, the worker and migrate each log in as a role of their own', () => {
    const file = readFileSync(composeFile(), 'utf8');
    assert.deepEqual(
      [...file.matchAll(/\$\{(\w*PASSWORD\w*):-/g)].map((m) => m[1]),
      [],
      'passwords are required (${NAME:?...})',
    );
    const c = compose();
    const env = (name: string) => c.services[name]!.environment ?? {};
    // The password is still a ${NAME:?...} here, no valid URL yet.
    const login = (url: string | undefined) => /^postgresql:\/\/([\w-]+)[:@]/.exec(url ?? '')?.[1];
    const owner = login(env('migrate').DATABASE_URL);
    const api = login(env('api').API_DATABASE_URL);
    const worker = login(env('worker').WORKER_DATABASE_URL);
    assert.ok(owner && api && worker, 'each has its URL');
    assert.equal(new Set([owner, api, worker, env('postgres').POSTGRES_USER]).size, 4, 'four logins: the superuser is none of them');
    assert.deepEqual([env('migrate').API_DATABASE_ROLE, env('migrate').WORKER_DATABASE_ROLE], [api, worker], 'migrate grants these two');
    // The owner's login and the other role's stay out of each role's process.
    assert.equal(env('api').DATABASE_URL, undefined);
    assert.equal(env('api').WORKER_DATABASE_URL, undefined);
    assert.equal(env('worker').DATABASE_URL, undefined);
    assert.equal(env('worker').API_DATABASE_URL, undefined);
    // The roles step makes each login, none a superuser, and runs before migrate.
    const roles = commandText(c.services['postgres-roles']!);
    for (const role of [owner, api, worker])
      assert.match(roles, new RegExp(`ALTER ROLE ${role} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE`));
    assert.equal(dependsOn(c.services.migrate!)['postgres-roles']?.condition, 'service_completed_successfully');
    for (const name of ['api', 'worker']) assert.equal(dependsOn(c.services[name]!).migrate?.condition, 'service_completed_successfully');
  });

  test('data lives on named volumes; a host path is only configuration from ops/, mounted read-only', () => {
    const c = compose();
    const named = Object.keys(c.volumes ?? {});
    const mountsOf = (s: Service) =>
      (s.volumes ?? []).map((v) => {
        if (typeof v !== 'string') return { source: v.source ?? '', target: v.target, readOnly: false };
        const [source, target, mode] = v.split(':');
        return { source: source!, target, readOnly: (mode ?? '').split(',').includes('ro') };
      });
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
      for (const mount of mountsOf(service)) {
        if (named.includes(mount.source)) continue;
        assert.match(mount.source, /^\.\/ops\/[\w./-]+\.yaml$/, `${name}: ${mount.source} is a named volume or a file of ops/`);
        assert.ok(mount.readOnly, `${name}: ${mount.source} is mounted read-only`);
        readFileSync(path.join(projectRoot(), mount.source)); // and it is in the repository
      }
    }
  });

  test('Temporal and its UI are on an internal network with no host ports, the UI read-only', () => {
    const c = compose();
    const temporalServices = Object.keys(c.services).filter((name) => name.startsWith('temporal'));
    assert.ok(temporalServices.length >= CLUSTER_ROLES.length + 3, 'the roles, the schema and namespace jobs, the UI, the database');
    for (const name of temporalServices) {
      const service = c.services[name]!;
      assert.equal(service.ports, undefined, `${name} publishes no port`);
      const networks = networksOf(service);
      assert.ok(networks.length > 0);
      for (const network of networks) assert.equal(c.networks?.[network]?.internal, true, `${name}: ${network} is internal`);
    }
    assert.equal(String(c.services['temporal-ui']!.environment?.TEMPORAL_DISABLE_WRITE_ACTIONS), 'true');
    // The roles reach Temporal's frontend over that network.
    const [frontend] = temporalRoles(c).get('frontend')!;
    const temporalNetworks = networksOf(c.services[frontend!]!);
    for (const name of ['api', 'worker'])
      assert.ok(
        networksOf(c.services[name]!).some((n) => temporalNetworks.includes(n)),
        `${name} reaches Temporal`,
      );
  });

  test('the admin plane listens apart, on an internal network with no host port', () => {
    const c = compose();
    const api = c.services.api!;
    const env = api.environment ?? {};
    assert.equal(env.ADMIN_HOST, '0.0.0.0');
    assert.equal(String(env.ADMIN_PORT), '3001');
    assert.ok(networksOf(api).includes('admin'), 'the API joins the admin network');
    assert.equal(c.networks?.admin?.internal, true, 'the admin network has no route out');
    const published = JSON.stringify(api.ports ?? []);
    assert.ok(!published.includes('3001'), `no host port for the admin plane: ${published}`);
    for (const [name, service] of Object.entries(c.services))
      if (name !== 'api') assert.ok(!networksOf(service).includes('admin'), `${name} is not on the admin network`);
  });

  test("the API outweighs every other service for a contended host's cores", () => {
    const c = compose();
    const api = c.services.api!.cpu_shares ?? 1024;
    for (const [name, service] of Object.entries(c.services))
      if (name !== 'api') assert.ok((service.cpu_shares ?? 1024) < api, `${name} weighs less than the API (${api})`);
  });

  test('each role as compose configures it passes the production check, given the settings compose asks for', () => {
    const c = compose();
    // What an operator supplies for each ${NAME:?...}; a ${NAME:-default} keeps its default.
    const supplied = (name: string) =>
      name.startsWith('RPC_URLS_')
        ? 'https://rpc-1.example/key,https://rpc-2.example'
        : ({ PUBLIC_BASE_URL: 'https://pay.example.com', SMTP_URL: 'smtp://mail.internal:587', TRUSTED_PROXIES: '10.0.0.0/8' }[name] ??
          'x'.repeat(40));
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

  test('every image is pinned in config/toolchain.json, Temporal Server and its admin tools at the release the rehearsal runs', () => {
    const c = compose();
    const release = toolchain.temporalServer.version;
    const pinned = new Set([
      `${TEMPORAL_SERVER}:${release}`,
      `${TEMPORAL_ADMIN_TOOLS}:${release}`,
      ...Object.values(toolchain.containerImages),
    ]);
    const used = new Set<string>();
    for (const [name, service] of Object.entries(c.services)) {
      if (service.build !== undefined) continue; // the service's own image, built from this checkout
      assert.ok(service.image, `${name} names an image`);
      assert.doesNotMatch(service.image, /\$/, `${name}: the tag is the pin, not a variable`);
      assert.ok(pinned.has(service.image), `${name}: ${service.image} is pinned in config/toolchain.json`);
      used.add(service.image);
    }
    assert.deepEqual(
      [...pinned].filter((image) => !used.has(image)),
      [],
      'every pin is used',
    );
    for (const image of used)
      if ([TEMPORAL_SERVER, TEMPORAL_ADMIN_TOOLS].includes(imageName(image))) assert.equal(imageTag(image), release, image);
    assert.equal(
      Object.values(c.services).some((s) => s.image?.startsWith('temporalio/auto-setup')),
      false,
      'no development image that creates its schema at boot',
    );
  });

  test("Temporal's roles are the rehearsal's, each a service of its own, with the rehearsal's history shards", () => {
    const c = compose();
    const roles = temporalRoles(c);
    assert.deepEqual([...roles.keys()].sort(), [...CLUSTER_ROLES].sort());
    for (const [role, names] of roles) {
      assert.equal(names.length, role === 'history' ? HISTORY_PROCESSES : 1, `${role}: as many services as the rehearsal's processes`);
      for (const name of names) {
        // Fixed for the life of the cluster: the first start stores it, and every role must agree.
        assert.equal(c.services[name]!.environment?.NUM_HISTORY_SHARDS, String(DEFAULT_HISTORY_SHARDS), `${name}: history shards`);
        assert.equal(c.services[name]!.environment?.DB, 'postgres12', `${name}: PostgreSQL, as the rehearsal`);
      }
    }
    // The rehearsal runs the cluster code's default count: were it to pass its own, this test must read it there.
    const rehearsal = path.join(projectRoot(), 'simulate', 'rehearsal');
    for (const name of readdirSync(rehearsal).filter((f) => f.endsWith('.ts')))
      assert.doesNotMatch(
        readFileSync(path.join(rehearsal, name), 'utf8'),
        /historyShards\s*:/,
        `simulate/rehearsal/${name} keeps the default shards`,
      );
    const file = readFileSync(composeFile(), 'utf8');
    assert.match(file, /FIXED FOR THE LIFE OF THE CLUSTER/, 'the compose file says the shard count never changes');
  });

  test("a one-shot job sets up both of Temporal's databases from the release's versioned schemas, and every role waits for it", () => {
    const c = compose();
    const jobs = Object.entries(c.services).filter(
      ([, s]) => s.image && imageName(s.image) === TEMPORAL_ADMIN_TOOLS && commandText(s).includes('temporal-sql-tool'),
    );
    assert.equal(jobs.length, 1, 'one schema job');
    const [job, service] = jobs[0]!;
    const script = commandText(service);
    for (const step of ['create-database', 'setup-schema -v 0.0', 'update-schema -d'])
      assert.ok(script.includes(step), `${job} runs ${step}`);
    for (const schema of ['temporal', 'visibility']) assert.ok(script.includes(schema), `${job} covers the ${schema} schema`);
    assert.match(script, /\/etc\/temporal\/schema\/postgresql\/v12\/\$\$schema\/versioned/, 'the versioned schemas the image carries');
    assert.equal(service.restart, 'no', 'a job, not a daemon');
    for (const name of [...temporalRoles(c).values()].flat())
      assert.equal(dependsOn(c.services[name]!)[job]?.condition, 'service_completed_successfully', `${name} waits for ${job}`);
    // The application starts once the namespace exists, after every role answers.
    for (const name of ['api', 'worker']) {
      const waits = Object.entries(dependsOn(c.services[name]!)).filter(([, d]) => d.condition === 'service_completed_successfully');
      const namespaceJob = waits.map(([n]) => c.services[n]!).find((s) => commandText(s).includes('operator namespace create'));
      assert.ok(namespaceJob, `${name} waits for the namespace job`);
      for (const role of [...temporalRoles(c).values()].flat())
        assert.equal(dependsOn(namespaceJob)[role]?.condition, 'service_healthy', `the namespace job waits for ${role}`);
    }
  });

  test('docker-compose config accepts the file, with the settings it requires, and names each one missing', (t) => {
    const docker = process.env.DOCKER_COMPOSE_PATH || 'docker-compose';
    const file = readFileSync(composeFile(), 'utf8');
    const required = [...new Set([...file.matchAll(/\$\{(\w+):\?/g)].map((m) => m[1]!))];
    assert.ok(required.includes('SERVICE_SECRET'));
    // Only what the file asks for: nothing from this machine's environment, no .env file.
    const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
    const dir = mkdtempSync(path.join(tmpdir(), 'compose-'));
    const envFile = path.join(dir, 'empty.env');
    writeFileSync(envFile, '');
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const run = (env: NodeJS.ProcessEnv) =>
      spawnSync(docker, ['-f', composeFile(), '--project-directory', projectRoot(), '--env-file', envFile, 'config', '-q'], {
        env,
        encoding: 'utf8',
        timeout: 60_000,
      });
    const ok = run({ ...base, ...Object.fromEntries(required.map((name) => [name, 'x'])) });
    assert.equal(ok.error, undefined, `${docker} runs (node scripts/setup.mjs --for test installs it): ${ok.error?.message}`);
    assert.equal(ok.status, 0, ok.stderr);
    assert.equal(ok.stderr.trim(), '', 'no warning (an ignored key is one)');
    const missing = run({ ...base, ...Object.fromEntries(required.filter((n) => n !== 'SERVICE_SECRET').map((name) => [name, 'x'])) });
    assert.notEqual(missing.status, 0);
    assert.match(missing.stderr, /SERVICE_SECRET/);
  });
});
