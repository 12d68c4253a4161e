import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { clientAddress } from '../../src/http/middleware/client-ip';
import type { ApiContext } from '../../src/http/context';

/** Just what clientAddress reads of a request: the socket's peer, the headers, and the request's log. */
function requestFrom(peer: string, forwardedFor: string | undefined, warnings: unknown[]): ApiContext {
  const headers: Record<string, string> = forwardedFor ? { 'x-forwarded-for': forwardedFor } : {};
  return {
    req: { socket: { remoteAddress: peer }, headers },
    get: (name: string) => headers[name.toLowerCase()] ?? '',
    state: { log: { warn: (...args: unknown[]) => warnings.push(args) } },
  } as unknown as ApiContext;
}

describe('the client address behind (or without) proxies', () => {
  test('a trusted proxy’s X-Forwarded-For names the client; nothing is logged', () => {
    const warnings: unknown[] = [];
    const clientIp = clientAddress(['10.0.0.0/8']);
    assert.equal(clientIp(requestFrom('10.0.0.5', '203.0.113.9', warnings)), '203.0.113.9');
    assert.deepEqual(warnings, []);
  });

  test('X-Forwarded-For from a peer not trusted is ignored and logged once per process, with no proxies or others', () => {
    for (const trusted of [[], ['10.0.0.0/8']]) {
      const warnings: unknown[] = [];
      const clientIp = clientAddress(trusted);
      assert.equal(clientIp(requestFrom('198.51.100.7', '203.0.113.9', warnings)), '198.51.100.7');
      assert.equal(clientIp(requestFrom('198.51.100.8', '203.0.113.9', warnings)), '198.51.100.8');
      assert.equal(warnings.length, 1, `trusted: ${trusted.join(',')}`);
      assert.deepEqual((warnings[0] as unknown[])[0], { peer: '198.51.100.7' });
      assert.match(String((warnings[0] as unknown[])[1]), /TRUSTED_PROXIES/);
    }
  });

  test('a request without the header logs nothing', () => {
    const warnings: unknown[] = [];
    assert.equal(clientAddress([])(requestFrom('198.51.100.7', undefined, warnings)), '198.51.100.7');
    assert.deepEqual(warnings, []);
  });
});
