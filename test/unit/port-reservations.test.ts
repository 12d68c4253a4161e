import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, test } from 'node:test';
import { freePort } from '../../src/embedded/process';
import { RESERVATION_HOLD_MS, reservePort } from '../../src/embedded/port-reservations';

describe('port reservations', () => {
  test('a drawn port is not handed out again while its server has not bound it, and lapses after the hold', async () => {
    const port = await freePort();
    // Still free to bind (nothing listens yet), so only the reservation keeps a second draw off it.
    assert.equal(await bindable(port), true);
    assert.equal(reservePort(port), false, 'a live reservation refuses another process');
    assert.equal(reservePort(port, Date.now() + RESERVATION_HOLD_MS + 1_000), true, 'a lapsed one is taken over');
  });

  test('draws in a row never repeat a number, though none of them is bound', async () => {
    const drawn: number[] = [];
    for (let i = 0; i < 40; i++) drawn.push(await freePort());
    assert.equal(new Set(drawn).size, drawn.length);
  });
});

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
