import toolchainJson from '../../config/toolchain.json';

/**
 * config/toolchain.json: versions of the tools set-up builds and the default ports, the one place for
 * them (scripts/setup.mjs and tools/temporal-test-server/pom.xml read the same file). A JSON import,
 * so `tsc` copies it next to the compiled code and dist/ needs no repo-relative lookup.
 */
export interface Toolchain {
  temporalCli: { module: string; version: string };
  /** The release docker-compose.yml runs too (temporalio/server and temporalio/admin-tools at this tag). */
  temporalServer: { module: string; version: string; goToolchain: string };
  /** docker-compose.yml's other images, `name:tag` each. */
  containerImages: { temporalUi: string; postgres: string };
  temporalTestServer: { version: string };
  ports: { postgres: number; temporal: number; temporalUi: number; anvil: number; api: number; admin: number; sandboxProvider: number };
}

export const toolchain: Toolchain = toolchainJson;
