import pg from 'pg';

/** A database of its own beside the harness's: its url, and drop() when done. */
export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

function adminUrl(harnessUrl: string): string {
  const admin = new URL(harnessUrl);
  admin.pathname = '/postgres';
  return admin.toString();
}

async function asAdmin(harnessUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl(harnessUrl) });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Creates an empty database beside the harness's (named by `label` and the process), for tests that apply migrations themselves. */
export async function openScratchDatabase(harnessUrl: string, label: string): Promise<ScratchDatabase> {
  const name = `partner_payments_${label}_${process.pid}`;
  await asAdmin(harnessUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await asAdmin(harnessUrl, `CREATE DATABASE "${name}"`);
  const url = new URL(harnessUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => asAdmin(harnessUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}

/** A database of its own beside the harness's, dropped afterwards: for tests that apply migrations themselves. */
export async function withScratchDatabase<T>(harnessUrl: string, label: string, fn: (url: string) => Promise<T>): Promise<T> {
  const scratch = await openScratchDatabase(harnessUrl, label);
  try {
    return await fn(scratch.url);
  } finally {
    await scratch.drop().catch(() => undefined);
  }
}
