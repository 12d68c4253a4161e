import pg from 'pg';

/** A database of its own beside the harness's, dropped afterwards: for tests that apply migrations themselves. */
export async function withScratchDatabase<T>(harnessUrl: string, label: string, fn: (url: string) => Promise<T>): Promise<T> {
  const name = `partner_payments_${label}_${process.pid}`;
  const admin = new URL(harnessUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${name}"`);
    const url = new URL(harnessUrl);
    url.pathname = `/${name}`;
    return await fn(url.toString());
  } finally {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
    await client.end();
  }
}
