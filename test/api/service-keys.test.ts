import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeProtectedHeader } from 'jose';
import { authenticateApp } from '../../src/domain/apps/apps';
import { exchangeClientToken, verifyClientToken } from '../../src/domain/client-auth/access-tokens';
import { createCursorCodec } from '../../src/domain/requests/pagination';
import { clientSecretFor, verifyClientSecret } from '../../src/domain/payments/payment-view';
import { keyIdOf, type ServiceKeys } from '../../src/domain/keys/service-keys';
import { createWebhookEndpoint } from '../../src/domain/webhooks/endpoints';
import { decryptSigningSecret } from '../../src/domain/webhooks/signing-secrets';
import { call, newApp, uniqueUserId } from '../support/api-client';
import { cli } from '../support/cli';
import { getHarness, TEST_SERVICE_SECRET } from '../support/harness';

// B is the harness's own key, so re-sealing the shared database under it leaves every other test's rows readable.
const A = 'service-key-a-0123456789abcdef0123456789abcdef';
const B = TEST_SERVICE_SECRET;
const onlyA: ServiceKeys = { current: A, previous: [] };
const bWithA: ServiceKeys = { current: B, previous: [A] };
const onlyB: ServiceKeys = { current: B, previous: [] };

test('the service secret rotates as a keyring: what key A sealed and signed reads under B with A kept, reseal moves it to B, and once A is dropped only its tokens fail', async () => {
  const h = await getHarness();
  const prisma = h.db.prisma;
  const cred = await newApp();
  const app = (await authenticateApp(prisma, cred.appId, cred.appSecret))!;
  const account = await call('/v2/accounts', { credential: cred, body: { externalUserId: uniqueUserId('keys') } });
  assert.equal(account.status, 201, account.text);

  // Sealed, signed and derived under A.
  const created = await createWebhookEndpoint(
    { prisma, serviceSecret: onlyA, destinations: { allowPrivateDestinations: true } },
    cred.appId,
    { url: 'http://127.0.0.1:9/pp' },
  );
  const row = () => prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: created.endpoint.id } });
  assert.ok((await row()).secretCiphertext.startsWith(`v2.${keyIdOf(A)}.`));
  const tokenA = (await exchangeClientToken(prisma, onlyA, app, { accountId: account.body.account.id })).accessToken;
  const clientSecretA = clientSecretFor(onlyA, 'payment_keyring0000000000000000');
  const cursorA = createCursorCodec(onlyA).encode('scope', { p: 1 });

  // Rotated to B with A kept: everything still reads and verifies; new seals and tokens use B.
  assert.equal(decryptSigningSecret(bWithA, created.endpoint.id, (await row()).secretCiphertext), created.signingSecret);
  assert.ok(await verifyClientToken(prisma, bWithA, tokenA), 'a token minted under A');
  assert.ok(verifyClientSecret(bWithA, 'payment_keyring0000000000000000', clientSecretA));
  assert.deepEqual(createCursorCodec(bWithA).decode('scope', cursorA), { p: 1 });
  const tokenB = (await exchangeClientToken(prisma, bWithA, app, { accountId: account.body.account.id })).accessToken;
  assert.equal(decodeProtectedHeader(tokenB).kid, keyIdOf(B));

  // Re-seal every sealed column under B.
  const report = await cli(['keys', 'reseal'], { SERVICE_SECRET: B, SERVICE_SECRET_PREVIOUS: A });
  assert.equal(report.currentKeyId, keyIdOf(B));
  const webhooks = report.columns.find((c: { column: string }) => c.column === 'webhook_endpoints.secret_ciphertext');
  assert.ok(webhooks.resealed >= 1, JSON.stringify(report));
  assert.deepEqual(webhooks.unreadable, []);
  assert.ok((await row()).secretCiphertext.startsWith(`v2.${keyIdOf(B)}.`));
  const again = await cli(['keys', 'reseal'], { SERVICE_SECRET: B, SERVICE_SECRET_PREVIOUS: A });
  assert.equal(
    again.columns.find((c: { column: string }) => c.column === 'webhook_endpoints.secret_ciphertext').resealed,
    0,
    'a second reseal has nothing to do',
  );

  // A dropped: the sealed column still reads; what only A signed fails.
  assert.equal(decryptSigningSecret(onlyB, created.endpoint.id, (await row()).secretCiphertext), created.signingSecret);
  assert.ok(await verifyClientToken(prisma, onlyB, tokenB));
  assert.equal(await verifyClientToken(prisma, onlyB, tokenA), null, 'a token minted under A fails once A is dropped');
  assert.equal(verifyClientSecret(onlyB, 'payment_keyring0000000000000000', clientSecretA), false);
  assert.throws(() => createCursorCodec(onlyB).decode('scope', cursorA));
});
