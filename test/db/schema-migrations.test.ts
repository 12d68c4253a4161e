import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { getHarness } from '../support/harness';

/**
 * Prisma's schema engine (migrate diff) can't run here, so this test checks the agreement itself:
 * every model and field of prisma/schema has its table and column, with the matching type and
 * nullability, in a database built only from prisma/migrations, and nothing extra is there.
 */
interface Column {
  table: string;
  column: string;
  type: string;
  nullable: boolean;
}

const SCALARS: Record<string, string[]> = {
  String: ['text', 'character varying'],
  Int: ['integer'],
  BigInt: ['bigint'],
  Boolean: ['boolean'],
  DateTime: ['timestamp with time zone', 'timestamp without time zone'],
  Json: ['jsonb'],
  Decimal: ['numeric'],
};

function schemaColumns(): Column[] {
  const dir = path.resolve(__dirname, '../../prisma/schema');
  const source = readdirSync(dir)
    .filter((f) => f.endsWith('.prisma'))
    .map((f) => readFileSync(path.join(dir, f), 'utf8'))
    .join('\n');
  const enums = new Set([...source.matchAll(/^enum\s+(\w+)/gm)].map((m) => m[1]));
  const columns: Column[] = [];
  for (const m of source.matchAll(/^model\s+(\w+)\s*\{([\s\S]*?)^\}/gm)) {
    const [, model, body = ''] = m;
    const table = /@@map\("([^"]+)"\)/.exec(body)?.[1] ?? model!;
    for (const line of body.split('\n')) {
      const f = /^\s*(\w+)\s+(\w+)(\[\])?(\?)?(.*)$/.exec(line);
      if (!f || line.trim().startsWith('//') || line.trim().startsWith('@@')) continue;
      const [, name, type = '', list, optional, rest = ''] = f;
      if (!(type in SCALARS) && !enums.has(type)) continue; // relation field
      columns.push({
        table,
        column: /@map\("([^"]+)"\)/.exec(rest)?.[1] ?? name!,
        type: list ? 'ARRAY' : enums.has(type) ? 'USER-DEFINED' : type,
        nullable: Boolean(optional) || Boolean(list),
      });
    }
  }
  return columns;
}

test('schema.prisma and the SQL migrations describe the same tables and columns', async () => {
  const h = await getHarness();
  const rows = await h.db.prisma.$queryRaw<Array<{ table_name: string; column_name: string; data_type: string; is_nullable: string }>>`
    SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
    WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'`;
  const db = new Map(rows.map((r) => [`${r.table_name}.${r.column_name}`, r]));
  const expected = schemaColumns();
  assert.ok(expected.length > 20, 'parsed the schema');
  for (const c of expected) {
    const key = `${c.table}.${c.column}`;
    const actual = db.get(key);
    assert.ok(actual, `${key} is in schema.prisma but no migration creates it`);
    const allowed = SCALARS[c.type] ?? [c.type];
    assert.ok(allowed.includes(actual.data_type), `${key}: schema says ${c.type}, database has ${actual.data_type}`);
    if (c.type !== 'ARRAY') {
      assert.equal(actual.is_nullable === 'YES', c.nullable, `${key}: nullability differs`);
    }
    db.delete(key);
  }
  assert.deepEqual([...db.keys()], [], 'columns created by migrations but missing from schema.prisma');
});

test('every migration is recorded in _prisma_migrations with its checksum', async () => {
  const h = await getHarness();
  const dirs = readdirSync(path.resolve(__dirname, '../../prisma/migrations'), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  const applied = await h.db.prisma.$queryRaw<Array<{ migration_name: string; checksum: string; finished_at: Date | null }>>`
    SELECT migration_name, checksum, finished_at FROM _prisma_migrations ORDER BY migration_name`;
  assert.deepEqual(
    applied.map((a) => a.migration_name),
    dirs,
  );
  assert.ok(applied.every((a) => a.finished_at !== null && /^[0-9a-f]{64}$/.test(a.checksum)));
});
