import type pg from 'pg';

/**
 * The database logins: the owner runs migrations and owns every table; the API and the worker each
 * log in as a role of their own with row access only (no DDL, no CREATE, never superuser). Every
 * table a migration adds is readable and writable by both unless named below, so a new table needs
 * no grant; a table the API must not touch is added to API_DENIED_TABLES in the same change.
 * See docs/decisions/operations.md, "Database roles".
 */
export interface DatabaseRoles {
  api: string;
  worker: string;
}

/** The embedded cluster's logins (and the names production's init step creates by default). */
export const DEFAULT_DATABASE_ROLES: DatabaseRoles = { api: 'partner_payments_api', worker: 'partner_payments_worker' };

/** Only the signer's settlement sender takes these; the API can't sign, so it gets no access at all. */
export const API_DENIED_TABLES = ['sender_locks'] as const;

/** Written only by workflows (the API signals them) or the chain scanner; the API reads them. */
export const API_READ_ONLY_TABLES = [
  'settlement_legs',
  'chain_scan_cursors',
  'chain_inclusions',
  'deposit_resolutions',
  'vault_receipts',
  'webhook_attempts',
] as const;

/** Migration history: the owner's alone. */
export const OWNER_ONLY_TABLES = ['_prisma_migrations'] as const;

/** A worker-only table the start-up check probes: the API's login must not be able to write it. */
export const WORKER_ONLY_PROBE_TABLE = API_DENIED_TABLES[0];

const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

function ident(name: string): string {
  if (!ROLE_NAME.test(name)) throw new Error(`invalid role name: ${JSON.stringify(name)} (lowercase letters, digits, _)`);
  return `"${name}"`;
}

/**
 * The grants, run by the owner after migrations (inside their advisory lock), in one transaction:
 * re-granting everything, then taking the API's exceptions away again, so a run is idempotent and
 * a table from any later migration is covered. Default privileges cover tables the owner creates
 * by other means (say `prisma migrate deploy`) until the next run.
 */
export function grantStatements(roles: DatabaseRoles): string[] {
  const api = ident(roles.api);
  const worker = ident(roles.worker);
  const both = `${api}, ${worker}`;
  const existing = (tables: readonly string[]) => `SELECT unnest(ARRAY[${tables.map((t) => `'${t}'`).join(', ')}]) AS t`;
  const revokeFromExisting = (tables: readonly string[], privileges: string, grantees: string) => `
DO $$ DECLARE r record; BEGIN
  FOR r IN ${existing(tables)} LOOP
    IF to_regclass(format('public.%I', r.t)) IS NOT NULL THEN
      EXECUTE format('REVOKE ${privileges} ON public.%I FROM ${grantees}', r.t);
    END IF;
  END LOOP;
END $$`;
  return [
    // PostgreSQL before 15 lets every login create tables in public; only the schema's owner can say otherwise.
    `DO $$ BEGIN
  IF pg_has_role(current_user, (SELECT nspowner FROM pg_namespace WHERE nspname = 'public'), 'USAGE') THEN
    REVOKE CREATE ON SCHEMA public FROM PUBLIC;
  END IF;
END $$`,
    `REVOKE CREATE ON SCHEMA public FROM ${both}`,
    `GRANT USAGE ON SCHEMA public TO ${both}`,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${both}`,
    `GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO ${both}`,
    `ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${both}`,
    `ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO ${both}`,
    revokeFromExisting(OWNER_ONLY_TABLES, 'ALL', both),
    revokeFromExisting(API_DENIED_TABLES, 'ALL', api),
    revokeFromExisting(API_READ_ONLY_TABLES, 'INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER', api),
  ];
}

/** Applies grantStatements on a connection of the owner; roles equal to the owner's login are left alone. */
export async function applyRoleGrants(client: pg.Client | pg.PoolClient, roles: DatabaseRoles): Promise<void> {
  const { rows } = await client.query<{ me: string }>('SELECT current_user AS me');
  const me = rows[0]?.me;
  if (roles.api === me || roles.worker === me) return; // one login for everything: a sandbox shape only
  await client.query('BEGIN');
  try {
    for (const sql of grantStatements(roles)) await client.query(sql);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/**
 * Creates the two logins unless they exist (cluster-wide; concurrent callers are fine), without
 * superuser, CREATEDB or CREATEROLE. Used by the embedded cluster, whose loopback trust auth needs no
 * password; production creates them in its init step.
 */
export async function ensureLoginRoles(client: pg.Client, roles: DatabaseRoles): Promise<void> {
  for (const name of [roles.api, roles.worker]) {
    await client.query(`DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${name}') THEN
    CREATE ROLE ${ident(name)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$`);
  }
}

export interface LoginFacts {
  user: string;
  superuser: boolean;
  /** CREATE on schema public, or owning a table of it: the login could change the schema. */
  canChangeSchema: boolean;
  /** INSERT on the worker-only probe table (false when the table is absent). */
  writesWorkerOnlyTable: boolean;
}

/** What the login of a pool may do, read from the catalog at start. */
export async function loginFacts(query: (sql: string) => Promise<{ rows: unknown[] }>): Promise<LoginFacts> {
  const { rows } = await query(`
    SELECT current_user AS "user",
           (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser,
           has_schema_privilege('public', 'CREATE')
             OR EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = 'public' AND tableowner = current_user) AS "canChangeSchema",
           COALESCE(to_regclass('public.${WORKER_ONLY_PROBE_TABLE}') IS NOT NULL
             AND has_table_privilege('public.${WORKER_ONLY_PROBE_TABLE}', 'INSERT'), false) AS "writesWorkerOnlyTable"`);
  return rows[0] as LoginFacts;
}

/**
 * Why a role's login is unfit for production, each problem naming the setting that fixes it. The
 * API's login must not write the worker's tables, so it can't be the worker's (or the owner's) login.
 */
export function loginProblems(role: 'api' | 'worker', facts: LoginFacts): string[] {
  const setting = role === 'api' ? 'API_DATABASE_URL' : 'WORKER_DATABASE_URL';
  const problems: string[] = [];
  if (facts.superuser) problems.push(`${setting}: logs in as ${facts.user}, a superuser; give the ${role} a role of its own`);
  if (facts.canChangeSchema)
    problems.push(`${setting}: ${facts.user} can create or owns tables; the ${role} gets row access only (the owner migrates)`);
  if (role === 'worker' && !facts.writesWorkerOnlyTable)
    problems.push(
      `${setting}: ${facts.user} can't write ${WORKER_ONLY_PROBE_TABLE}: the worker has the API's login, or the grants did not run`,
    );
  if (role === 'api' && facts.writesWorkerOnlyTable)
    problems.push(
      `${setting}: ${facts.user} can write ${WORKER_ONLY_PROBE_TABLE}, a worker-only table: the API shares the worker's or the owner's login`,
    );
  return problems;
}
