import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { getHarness } from '../support/harness';
import { until } from '../support/until';
import { listenOnChannel } from '../../src/db/listener';

/** A TCP relay to PostgreSQL whose open connections can be frozen: bytes stop both ways, nothing closes (a dropped NAT entry). */
async function freezableRelay(target: URL): Promise<{ url: string; freeze(): void; close(): Promise<void> }> {
  const open = new Set<{ client: net.Socket; upstream: net.Socket }>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    const pair = { client, upstream };
    open.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    const drop = () => {
      open.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop);
    upstream.on('error', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    freeze() {
      for (const { client, upstream } of open) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    async close() {
      for (const { client, upstream } of open) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

test('a LISTEN connection that dies silently is noticed by its heartbeat within seconds, reconnects, and hears notifications again', async () => {
  const h = await getHarness();
  const relay = await freezableRelay(new URL(h.databaseUrl));
  const heard: string[] = [];
  const errors: string[] = [];
  let connected = 0;
  const listener = listenOnChannel({
    url: relay.url,
    channel: 'listener_heartbeat_test',
    applicationName: 'listener heartbeat test',
    onNotification: (payload) => heard.push(payload),
    onConnected: () => (connected += 1),
    onError: (err) => errors.push(err.message),
    heartbeat: { everyMs: 200, answerWithinMs: 500 },
  });
  const notify = (payload: string) => h.db.pool.query('SELECT pg_notify($1, $2)', ['listener_heartbeat_test', payload]);
  try {
    await listener.ready;
    await notify('before');
    await until((saw) => (saw(heard), heard.includes('before')), 'the first notification');
    relay.freeze();
    await until((saw) => (saw(errors), errors.some((e) => /heartbeat unanswered/.test(e))), 'the heartbeat to find the frozen connection');
    await until((saw) => (saw(connected), connected >= 2), 'a new LISTEN over a fresh connection');
    await notify('after');
    await until((saw) => (saw(heard), heard.includes('after')), 'a notification after the reconnect');
    assert.deepEqual(heard, ['before', 'after'], 'each heard once');
  } finally {
    await listener.stop();
    await relay.close();
  }
});
