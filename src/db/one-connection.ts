import pg from 'pg';

/**
 * Runs `fn` on one connection of its own to `connectionString`, closed after whatever happens: for
 * the short administrative sessions (creating a database or its roles, checking a login) that must
 * not borrow the service's pools. An error on the idle connection after `fn` is of no one's concern.
 */
export async function withConnection<T>(
  connectionString: string,
  fn: (client: pg.Client) => Promise<T>,
  opts: { connectionTimeoutMillis?: number } = {},
): Promise<T> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: opts.connectionTimeoutMillis ?? 10_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
