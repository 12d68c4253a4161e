import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertPublicDestination, classifyAddress, DestinationNotAllowedError } from '../../src/webhooks/destination';
import { parseRetryAfter, planNextStep } from '../../src/domain/webhooks/policy';

describe('Webhook delivery policy (pure)', () => {
  test('a 2xx completes the delivery on any attempt', () => {
    assert.deepEqual(planNextStep({ kind: 'response', status: 200 }, 1, 0), { action: 'succeeded' });
    assert.deepEqual(planNextStep({ kind: 'response', status: 204 }, 3, 0.5), { action: 'succeeded' });
  });

  test('retryable statuses, timeouts and connection errors back off 30 s then 5 min (+0..10% jitter) and stop after the 3rd attempt', () => {
    for (const status of [408, 425, 429, 500, 502, 503, 504]) {
      assert.deepEqual(planNextStep({ kind: 'response', status }, 1, 0), { action: 'retry', delayMs: 30_000 }, `status ${status}`);
      assert.deepEqual(planNextStep({ kind: 'response', status }, 2, 0), { action: 'retry', delayMs: 300_000 }, `status ${status}`);
      assert.deepEqual(planNextStep({ kind: 'response', status }, 3, 0), { action: 'abandoned', reason: 'max_attempts_reached' });
    }
    assert.deepEqual(planNextStep({ kind: 'timeout' }, 1, 0.5), { action: 'retry', delayMs: 31_500 });
    assert.deepEqual(planNextStep({ kind: 'connection_error' }, 2, 0.999), { action: 'retry', delayMs: 329_970 });
    assert.deepEqual(planNextStep({ kind: 'connection_error' }, 3, 0), { action: 'abandoned', reason: 'max_attempts_reached' });
  });

  test('400 and every other non-2xx status are abandoned at once', () => {
    for (const status of [301, 400, 401, 403, 404, 410, 422, 501, 505]) {
      assert.deepEqual(
        planNextStep({ kind: 'response', status }, 1, 0),
        { action: 'abandoned', reason: 'non_retryable_status' },
        `status ${status}`,
      );
    }
  });

  test('Retry-After on 429 and 503 is honoured as a minimum, capped at 1 hour; elsewhere it is ignored', () => {
    assert.deepEqual(planNextStep({ kind: 'response', status: 429, retryAfterMs: 120_000 }, 1, 0), { action: 'retry', delayMs: 120_000 });
    assert.deepEqual(planNextStep({ kind: 'response', status: 503, retryAfterMs: 1_000 }, 1, 0), { action: 'retry', delayMs: 30_000 });
    assert.deepEqual(planNextStep({ kind: 'response', status: 503, retryAfterMs: 86_400_000 }, 2, 0), {
      action: 'retry',
      delayMs: 3_600_000,
    });
    assert.deepEqual(planNextStep({ kind: 'response', status: 500, retryAfterMs: 120_000 }, 1, 0), { action: 'retry', delayMs: 30_000 });
  });

  test('a refused destination or an endpoint no longer enabled abandons without retry', () => {
    assert.deepEqual(planNextStep({ kind: 'refused', reason: 'destination_not_allowed' }, 1, 0), {
      action: 'abandoned',
      reason: 'destination_not_allowed',
    });
    assert.deepEqual(planNextStep({ kind: 'refused', reason: 'endpoint_disabled' }, 2, 0), {
      action: 'abandoned',
      reason: 'endpoint_disabled',
    });
  });

  test('parses Retry-After as delta-seconds or an HTTP-date, ignoring anything else', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    assert.equal(parseRetryAfter('120', now), 120_000);
    assert.equal(parseRetryAfter(' 0 ', now), 0);
    assert.equal(parseRetryAfter('Sun, 22 Nov 2026 10:02:00 GMT', now), 120_000);
    assert.equal(parseRetryAfter('Sun, 22 Nov 2026 09:00:00 GMT', now), undefined);
    assert.equal(parseRetryAfter('-5', now), undefined);
    assert.equal(parseRetryAfter('1.5', now), undefined);
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter(undefined, now), undefined);
  });
});

describe('Webhook destinations (what counts as private)', () => {
  test('classifies loopback, RFC 1918, link-local and metadata, CGNAT, unique-local, unspecified, multicast and reserved addresses as not public', () => {
    const expected: Record<string, string> = {
      '127.0.0.1': 'loopback',
      '127.255.0.9': 'loopback',
      '10.20.30.40': 'private',
      '172.16.0.1': 'private',
      '172.31.255.254': 'private',
      '192.168.1.10': 'private',
      '169.254.169.254': 'link_local',
      '100.64.0.1': 'carrier_grade_nat',
      '100.100.100.200': 'carrier_grade_nat',
      '0.0.0.0': 'unspecified',
      '224.0.0.251': 'multicast',
      '255.255.255.255': 'broadcast',
      '240.0.0.1': 'reserved',
      '192.0.2.5': 'documentation',
      '198.18.0.1': 'benchmarking',
      '::': 'unspecified',
      '::1': 'loopback',
      'fd00:ec2::254': 'unique_local',
      'fc00::1': 'unique_local',
      'fe80::1%eth0': 'link_local',
      'ff02::fb': 'multicast',
      '::ffff:127.0.0.1': 'loopback',
      '::ffff:10.0.0.1': 'private',
      '::ffff:a9fe:a9fe': 'link_local',
      '64:ff9b::7f00:1': 'loopback',
      '2002:c0a8:0101::1': 'private',
      '2001:db8::1': 'documentation',
      '2001:0:4136:e378:8000:63bf:3fff:fdd2': 'tunnel',
    };
    for (const [address, cls] of Object.entries(expected)) assert.equal(classifyAddress(address), cls, address);
  });

  test('classifies public unicast addresses as public, including the edges of private ranges', () => {
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '172.15.255.255',
      '172.32.0.0',
      '100.63.255.255',
      '100.128.0.0',
      '11.0.0.1',
      '2606:4700:4700::1111',
      '2a00:1450:4001:81c::200e',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
    ]) {
      assert.equal(classifyAddress(address), 'public', address);
    }
  });

  test('a host is refused when any one of its addresses is private, and when it does not resolve', async () => {
    const resolve = async (host: string) => {
      if (host === 'mixed.example') return ['93.184.216.34', '10.0.0.7'];
      if (host === 'public.example') return ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'];
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    };
    await assert.rejects(assertPublicDestination(new URL('https://mixed.example/hook'), resolve), (err: unknown) => {
      assert.ok(err instanceof DestinationNotAllowedError);
      assert.equal(err.reason, 'private');
      assert.equal(err.address, '10.0.0.7');
      return true;
    });
    await assert.rejects(assertPublicDestination(new URL('https://nowhere.example/'), resolve), (err: unknown) => {
      assert.ok(err instanceof DestinationNotAllowedError);
      assert.equal(err.reason, 'unresolvable');
      return true;
    });
    assert.deepEqual(await assertPublicDestination(new URL('https://public.example/'), resolve), [
      '93.184.216.34',
      '2606:2800:220:1:248:1893:25c8:1946',
    ]);
    // `localhost` goes through the real resolver (it resolves to 127.0.0.1 or ::1).
    await assert.rejects(assertPublicDestination(new URL('https://localhost:8443/')), (err: unknown) => {
      assert.ok(err instanceof DestinationNotAllowedError);
      assert.equal(err.reason, 'loopback');
      return true;
    });
  });
});
