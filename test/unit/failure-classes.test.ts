import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPublicClient, http as viemHttp } from 'viem';
import { NamespaceNotFoundError } from '@temporalio/common';
import { classifyFailure } from '../../src/domain/requests/failure-classes';

/** A local JSON-RPC endpoint with a fixed behaviour; answers `undefined` = never answer. */
async function rpcServer(answer: (res: http.ServerResponse) => void | undefined) {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The error viem really raises for one eth_blockNumber against `url` (no retries: one attempt is enough). */
async function viemError(url: string): Promise<unknown> {
  const client = createPublicClient({ transport: viemHttp(url, { timeout: 150, retryCount: 0 }), cacheTime: 0 });
  try {
    await client.getBlockNumber();
  } catch (err) {
    return err;
  }
  throw new Error('the call was expected to fail');
}

const json = (status: number, body: unknown) => (res: http.ServerResponse) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

describe('failure classes (which cause answers which code)', () => {
  test('a chain RPC that is not reached, does not answer in time, or says it is busy is unreachable; one that answers an error is an upstream error', async () => {
    const cases: Array<[string, (res: http.ServerResponse) => void | undefined, string]> = [
      ['never answers', () => undefined, 'unreachable'],
      ['HTTP 503', json(503, { error: 'maintenance' }), 'unreachable'],
      ['HTTP 429', json(429, { error: 'slow down' }), 'unreachable'],
      ['HTTP 500', json(500, { error: 'bug' }), 'upstream_error'],
      ['JSON-RPC error', json(200, { jsonrpc: '2.0', id: 0, error: { code: -32603, message: 'internal error' } }), 'upstream_error'],
      ['JSON-RPC limit exceeded', json(200, { jsonrpc: '2.0', id: 0, error: { code: -32005, message: 'limit exceeded' } }), 'unreachable'],
    ];
    for (const [name, answer, kind] of cases) {
      const server = await rpcServer(answer);
      try {
        assert.deepEqual(classifyFailure(await viemError(server.url)), { kind, source: 'chain' }, name);
      } finally {
        await server.close();
      }
    }
    // Refused: a port that was just free.
    const gone = await rpcServer(() => undefined);
    await gone.close();
    assert.deepEqual(classifyFailure(await viemError(gone.url)), { kind: 'unreachable', source: 'chain' });
  });

  test("a wrapped cause is found, Temporal's missing namespace is unreachable, and anything else stays unclassified (500)", () => {
    assert.deepEqual(classifyFailure(new NamespaceNotFoundError('default')), { kind: 'unreachable', source: 'temporal' });
    const wrapped = new Error('outer', { cause: new Error('timeout exceeded when trying to connect') });
    assert.deepEqual(classifyFailure(wrapped), { kind: 'capacity', source: 'database' });
    // Prisma's P2039 for a SQLSTATE it has no code of its own for: PostgreSQL replaying its WAL after a kill.
    const startingUp = Object.assign(new Error('Database error. Code: `57P03`. Message: `the database system is starting up`'), {
      code: 'P2039',
      meta: { driverAdapterError: { cause: { kind: 'postgres', code: '57P03', originalCode: '57P03' } } },
    });
    assert.deepEqual(classifyFailure(startingUp), { kind: 'capacity', source: 'database' });
    assert.equal(classifyFailure(new TypeError("Cannot read properties of undefined (reading 'id')")), null);
    assert.equal(classifyFailure('not an error'), null);
  });
});
