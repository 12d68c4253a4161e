import type pg from 'pg';

/**
 * What a refused request must leave as it was: every table of the schema, read from PostgreSQL's
 * catalog (a new table is covered without a word here). A table linked to an app (app_id, or a
 * foreign key, an `<x>_id` column or a `<x>_type`/`<x>_id` pair leading to one) is compared on the fuzz's apps' rows only, since
 * the rest of the suite's workflows keep writing their own; any other table, whole. Compared: each
 * row's every column (a checksum) and the count. Left out, each with why, only what changes whoever
 * asks.
 */
export const TABLES_NOT_COMPARED: Readonly<Record<string, string>> = {
  _prisma_migrations: 'the migration history: only the migrator writes it',
  rate_limits: "every request, refused or not, counts against its app's quota: that is the limiter working",
  chain_scan_cursors: 'the chain scanner advances it on its own schedule, whatever the requests',
  request_log: 'every request authenticated as an app, refused or not, is in its request log: that is the log working',
  sender_locks: 'taken and let go by the settlement senders as they send, whatever the requests (the API never sends)',
};

export const COLUMNS_NOT_COMPARED: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  events: { dispatched_at: 'the webhook dispatcher marks each event once fanned out, after its commit' },
  operator_tokens: { last_used_at: "a token's last use is recorded whatever the answer to its request (at most once a minute)" },
};

/** Rows a refusal writes by design (a condition on alias `t` keeps the rest compared), each with why. */
export const ROWS_NOT_COMPARED: Readonly<Record<string, { where: string; why: string }>> = {
  operator_actions: {
    where: "t.outcome <> 'refused'",
    why: "an operator's request is audited whatever its outcome, refusals included (docs/decisions/dashboard-and-console.md, Operator console): a refusal's own audit row is what it must write",
  },
};

export interface TablePlan {
  table: string;
  /** How its rows are tied to the fuzz's apps; null: compared whole. */
  via: string | null;
  /** The WHERE condition on alias `t` ($1: the app ids), or null. */
  where: string | null;
  columns: string[];
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

interface ForeignKey {
  column: string;
  references: string;
  referencedColumn: string;
}

/** The comparison plan of every table in the database's current schema. */
export async function snapshotPlan(pool: pg.Pool): Promise<TablePlan[]> {
  const { rows: cols } = await pool.query<{ table: string; column: string }>(
    `SELECT c.relname AS table, a.attname AS column
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
     WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') ORDER BY c.relname, a.attnum`,
  );
  const { rows: fks } = await pool.query<ForeignKey & { table: string }>(
    `SELECT src.relname AS table, sa.attname AS column, dst.relname AS references, da.attname AS "referencedColumn"
     FROM pg_constraint k
     JOIN pg_class src ON src.oid = k.conrelid JOIN pg_class dst ON dst.oid = k.confrelid
     JOIN pg_attribute sa ON sa.attrelid = k.conrelid AND sa.attnum = k.conkey[1]
     JOIN pg_attribute da ON da.attrelid = k.confrelid AND da.attnum = k.confkey[1]
     WHERE k.contype = 'f' AND cardinality(k.conkey) = 1 AND k.connamespace = current_schema()::regnamespace
     ORDER BY src.relname, sa.attname`,
  );
  const columns = new Map<string, string[]>();
  for (const r of cols) columns.set(r.table, [...(columns.get(r.table) ?? []), r.column]);
  const keys = new Map<string, ForeignKey[]>();
  for (const fk of fks) keys.set(fk.table, [...(keys.get(fk.table) ?? []), fk]);
  // An `<x>_id` column without a foreign key names the table `<x>s` by the schema's convention.
  for (const [table, names] of columns) {
    for (const column of names) {
      const target = `${column.replace(/_id$/, '')}s`;
      if (column.endsWith('_id') && column !== 'app_id' && columns.has(target) && !keys.get(table)?.some((k) => k.column === column)) {
        keys.set(table, [...(keys.get(table) ?? []), { column, references: target, referencedColumn: 'id' }]);
      }
    }
  }

  type Scope = { via: string; polymorphic?: boolean; where: (alias: string, depth: number) => string };
  const scopes = new Map<string, Scope | null>();
  const scopeOf = (table: string, path: string[]): Scope | null => {
    if (scopes.has(table)) return scopes.get(table)!;
    const names = columns.get(table) ?? [];
    let scope: Scope | null = null;
    const polymorphic = names.find((c) => c.endsWith('_id') && names.includes(c.replace(/_id$/, '_type')));
    if (table === 'apps') scope = { via: 'id', where: (a) => `${a}.id = ANY($1)` };
    else if (names.includes('app_id')) scope = { via: 'app_id', where: (a) => `${a}.app_id = ANY($1)` };
    else if (polymorphic && path.length === 0) {
      // A <x>_type/<x>_id pair names a row of any table: the row is the apps' when that one is.
      const owners = [...columns.keys()]
        .filter((t) => t !== table && columns.get(t)!.includes('id'))
        .flatMap((t) => {
          const owner = scopeOf(t, [table]);
          return owner && !owner.polymorphic ? [{ t, owner }] : [];
        });
      scope = {
        via: `${polymorphic} -> any row of the apps`,
        polymorphic: true,
        where: (a, depth) =>
          `${a}.${ident(polymorphic)} IN (${owners.map(({ t, owner }) => `SELECT o${depth}.id FROM ${ident(t)} o${depth} WHERE ${owner.where(`o${depth}`, depth + 1)}`).join(' UNION ALL ')})`,
      };
    } else {
      for (const fk of keys.get(table) ?? []) {
        if (path.includes(fk.references)) continue;
        const parent = scopeOf(fk.references, [...path, table]);
        if (!parent) continue;
        scope = {
          via: `${fk.column} -> ${fk.references} (${parent.via})`,
          where: (a, depth) => {
            const p = `p${depth}`;
            return `${a}.${ident(fk.column)} IN (SELECT ${p}.${ident(fk.referencedColumn)} FROM ${ident(fk.references)} ${p} WHERE ${parent.where(p, depth + 1)})`;
          },
        };
        break;
      }
    }
    if (path.length === 0) scopes.set(table, scope);
    return scope;
  };

  return [...columns.keys()]
    .filter((table) => !Object.hasOwn(TABLES_NOT_COMPARED, table))
    .map((table) => {
      const scope = scopeOf(table, []);
      const skipped = COLUMNS_NOT_COMPARED[table] ?? {};
      const where = [scope?.where('t', 0), ROWS_NOT_COMPARED[table]?.where].filter(Boolean).join(' AND ') || null;
      return { table, via: scope?.via ?? null, where, columns: columns.get(table)!.filter((c) => !Object.hasOwn(skipped, c)) };
    });
}

/**
 * The snapshot: per table, its rows' count and a checksum of their compared columns. `extra` adds a
 * condition to a table's rows (on alias `t`, with $2 as its parameter).
 */
export async function takeSnapshot(
  pool: pg.Pool,
  plan: TablePlan[],
  appIds: string[],
  extra: { table: string; where: string; param: unknown },
): Promise<Record<string, [number, string]>> {
  const selects = plan.map((p) => {
    const conditions = [p.where, p.table === extra.table ? extra.where : null].filter(Boolean);
    const row = `md5(row(${p.columns.map((c) => `t.${ident(c)}`).join(', ')})::text)`;
    return `SELECT '${p.table}' AS name, json_build_array(count(*), coalesce(md5(string_agg(r, ',' ORDER BY r)), '')) AS v
      FROM (SELECT ${row} AS r FROM ${ident(p.table)} t${conditions.length ? ` WHERE ${conditions.join(' AND ')}` : ''}) x`;
  });
  const { rows } = await pool.query<{ s: Record<string, [number, string]> }>(
    `SELECT json_object_agg(name, v) AS s FROM (${selects.join('\nUNION ALL\n')}) all_tables`,
    [appIds, extra.param],
  );
  return rows[0]!.s;
}
