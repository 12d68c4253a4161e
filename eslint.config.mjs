// @ts-check
// The lint guards what review would miss: promises nobody awaits, workflow determinism, and the
// direction of imports between layers. Otherwise it stays light: typescript-eslint's recommended set,
// minus the rules listed below.
import { existsSync, readdirSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';
import local from './tools/eslint/import-boundaries.mjs';

/**
 * Pure modules: every file under an area's pure/ folder, src/domain/<area>/pure/ (the state machines,
 * their serde, hold reasons, confirmation polling, fees and minimums, and the types the workflow
 * contracts are made of). They are the only src/ code workflows may import, so they must stay pure:
 * no I/O, clock or randomness, no Node built-ins, Prisma or viem, and they import only each other.
 * A module a workflow needs moves into its area's pure/ folder, and is held to the same rule.
 */
const PURE_FILES = 'src/domain/*/pure/**/*.ts';
/** The same folders as import-boundaries paths (its `dir/**` is a prefix, not a glob), read from the tree. */
const PURE_DIRS = readdirSync(path.join(import.meta.dirname, 'src/domain'), { withFileTypes: true })
  .filter((area) => area.isDirectory() && existsSync(path.join(import.meta.dirname, 'src/domain', area.name, 'pure')))
  .map((area) => `src/domain/${area.name}/pure/**`);

/** What the domain may not import: the layers above it, and the composition of the service. */
const DOMAIN_MAY_NOT_IMPORT = ['src/http/**', 'src/runtime/**', 'src/temporal/**', 'src/cli/**', 'workflows/**', 'activities/**'];

/** Infrastructure folders: adapters to the outside world, below the domain. */
const INFRASTRUCTURE = ['src/chain', 'src/custody', 'src/db', 'src/mail', 'src/config', 'src/offramp', 'src/embedded'];

/**
 * The embedded stack (the local PostgreSQL, Temporal and anvil that `npm start`, the tests and the
 * rehearsal run, and where set-up put their tools): only the composition (src/runtime, src/cli) starts
 * it. What other code needs from it lives below it (the project root in src/platform).
 */
const EMBEDDED = 'src/embedded/**';

/** The longest a function of the service may be (lines of code, blank lines and comments aside). */
const MAX_FUNCTION_LINES = 80;

/**
 * Functions allowed past MAX_FUNCTION_LINES, each at most its length today (a ratchet: it may shrink,
 * never grow). Factories whose body is the object of closures they return are kept whole on purpose;
 * the others are to be split.
 */
const LONG_FUNCTIONS = [
  // Factories: one object of closures over shared state.
  { file: 'src/chain/evm.ts', name: 'createEvmChain', lines: 209 },
  { file: 'src/chain/chain-faults.ts', name: 'createChainFaults', lines: 157 },
  { file: 'src/temporal/gateway.ts', name: 'createTemporalGateway', lines: 285 },
  { file: 'src/offramp/sandbox-provider/server.ts', name: 'createSandboxProviderServer', lines: 385 },
  { file: 'src/http/app.ts', name: 'createApi', lines: 183 },
  { file: 'src/http/console/console.ts', name: 'registerOperatorConsole', lines: 244 },
  { file: 'src/cli/sandbox.ts', name: 'registerSandboxCommands', lines: 97 },
  { file: 'src/cli/webhooks.ts', name: 'registerWebhookCommands', lines: 86 },
  { file: 'src/runtime/service.ts', name: 'startService', lines: 210 },
  { file: 'src/offramp/sandbox-provider/launch.ts', name: 'launchSandboxProvider', lines: 87 },
];

/** Node built-ins, bare (`fs`, `fs/promises`) and prefixed (`node:fs`, also prefix-only ones like `node:test`). */
const noNodeBuiltins = (why) => [
  'error',
  {
    paths: builtinModules.filter((m) => !m.startsWith('node:')).map((name) => ({ name, message: why })),
    patterns: [{ group: ['node:*'], message: why }],
  },
];

export default defineConfig(
  globalIgnores(['src/generated/', 'dist/', 'node_modules/', '.data/']),

  tseslint.configs.recommended,
  {
    // Type-aware rules need the TypeScript program: every .ts file is in tsconfig.json.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // A promise nobody awaits loses its error, and in a workflow its ordering. `void p` says "on purpose".
      // node:test's describe/it/test return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] }],
        },
      ],
    },
  },
  { plugins: { local } },
  {
    // Short functions: control flow in one place, leaves pure.
    files: ['src/**/*.ts', 'activities/**/*.ts', 'workflows/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: MAX_FUNCTION_LINES, skipBlankLines: true, skipComments: true }] },
  },
  // A file's exception covers its every function at the longest one's length (the rule has no per-function option).
  ...Object.entries(
    LONG_FUNCTIONS.reduce(
      (byFile, f) => ({ ...byFile, [f.file]: Math.max(byFile[f.file] ?? 0, f.lines) }),
      /** @type {Record<string, number>} */ ({}),
    ),
  ).map(([file, lines]) => ({
    files: [file],
    rules: { 'max-lines-per-function': ['error', { max: lines, skipBlankLines: true, skipComments: true }] },
  })),
  {
    // Tests, the benchmark and the simulation read JSON response bodies as `any` on purpose.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'simulate/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },

  {
    // Only src/temporal/ talks to the Temporal client; the API, the CLI, tests and the benchmark go
    // through its gateway. Type imports count too: holding a Client is talking to it.
    files: ['**/*.ts'],
    ignores: ['src/temporal/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [{ regex: '^@temporalio/client(/.*)?$', message: 'only src/temporal/ imports the Temporal client; use its gateway' }],
        },
      ],
    },
  },
  {
    // Layers point one way: the domain knows nothing of HTTP, the workflow engine, the CLI or how the
    // service is put together; low-level helpers it needs live in src/platform.
    files: ['src/domain/**/*.ts'],
    rules: {
      'local/import-boundaries': [
        'error',
        {
          deny: { paths: [...DOMAIN_MAY_NOT_IMPORT, EMBEDDED] },
          message:
            'src/domain imports nothing from src/http, src/runtime, src/temporal, src/cli, src/embedded, workflows/ or activities/ (layers point one way; helpers live in src/platform)',
        },
      ],
    },
  },
  {
    // Infrastructure (chains, custody, database, mail, configuration, the off-ramp provider) sits
    // below the domain: it imports no domain, HTTP or composition module.
    // The embedded stack is the one piece of it the others don't reach into.
    files: INFRASTRUCTURE.map((dir) => `${dir}/**/*.ts`),
    ignores: [EMBEDDED],
    rules: {
      'local/import-boundaries': [
        'error',
        {
          deny: { paths: ['src/domain/**', ...DOMAIN_MAY_NOT_IMPORT, EMBEDDED] },
          message:
            'infrastructure imports no src/domain, src/http, src/runtime, src/temporal, src/cli, src/embedded, workflows/ or activities/ module (helpers live in src/platform)',
        },
      ],
    },
  },
  {
    files: ['src/embedded/**/*.ts'],
    rules: {
      'local/import-boundaries': [
        'error',
        {
          deny: { paths: ['src/domain/**', ...DOMAIN_MAY_NOT_IMPORT] },
          message:
            'src/embedded imports no src/domain, src/http, src/runtime, src/temporal, src/cli, workflows/ or activities/ module (helpers live in src/platform)',
        },
      ],
    },
  },
  {
    // The HTTP layer serves requests; it starts no local server and finds its files through src/platform.
    files: ['src/http/**/*.ts'],
    rules: {
      'local/import-boundaries': [
        'error',
        { deny: { paths: [EMBEDDED] }, message: 'src/http imports nothing from src/embedded (the project root is in src/platform)' },
      ],
    },
  },
  {
    // The platform is the floor: it imports only itself (and packages).
    files: ['src/platform/**/*.ts'],
    rules: {
      'local/import-boundaries': [
        'error',
        {
          deny: { paths: ['src/domain/**', 'src/generated/**', ...DOMAIN_MAY_NOT_IMPORT, ...INFRASTRUCTURE.map((dir) => `${dir}/**`)] },
          message: 'src/platform imports only src/platform: it is below every other layer',
        },
      ],
    },
  },
  {
    // Workflow code is replayed: it must be deterministic, so it reaches only the SDK's workflow API,
    // its own contracts and pure modules. Activities are called through proxyActivities<typeof ...>.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': noNodeBuiltins('workflow code runs in a deterministic sandbox: no Node built-ins (do I/O in an activity)'),
      'local/import-boundaries': [
        'error',
        {
          allow: { packages: ['@temporalio/workflow'], paths: ['workflows/**', ...PURE_DIRS] },
          allowTypeOnly: { paths: ['activities/**'] },
          message:
            'workflows import only @temporalio/workflow, workflows/ (contracts: workflows/contracts/), pure modules (src/domain/<area>/pure/), and `import type` from activities/',
        },
      ],
    },
  },
  {
    // After the src/domain block: for these files this stricter allow-list replaces its deny-list.
    files: [PURE_FILES],
    rules: {
      'no-restricted-imports': noNodeBuiltins('a pure module (src/domain/<area>/pure/) runs inside workflows: no Node built-ins'),
      'local/import-boundaries': [
        'error',
        {
          allow: { paths: PURE_DIRS },
          message: 'a pure module (src/domain/<area>/pure/) imports only other pure modules: no Prisma, viem or I/O',
        },
      ],
    },
  },
);
