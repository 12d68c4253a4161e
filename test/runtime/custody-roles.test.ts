import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { loadConfig } from '../../src/config';
import { createHdSigner, formatPublicKeys, publicKeysFilePath, seedFilePath, type CustodyPublicKeys } from '../../src/custody';
import { projectRoot } from '../../src/platform/project-root';
import { freePort } from '../../src/embedded/process';
import { startService, type RunningService } from '../../src/runtime/service';
import { call, newApp, uniqueUserId } from '../support/api-client';
import { getHarness, TEST_SERVICE_SECRET } from '../support/harness';

const OTHER_MNEMONIC = 'legal winner thank year wave sausage worth useful legal winner thank yellow';

describe('Keys outside the API', () => {
  const dirs: string[] = [];
  const started: RunningService[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'custody-roles-'));
    dirs.push(dir);
    return dir;
  };
  after(async () => {
    for (const service of started) await service.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** The production shape's settings on the harness's PostgreSQL and Temporal, with an empty DATA_DIR of its own. */
  async function serviceEnv(overrides: Record<string, string>): Promise<NodeJS.ProcessEnv> {
    const h = await getHarness();
    // The bundled environments, their sandbox network on the harness's anvil.
    const environmentsFile = path.join(tempDir(), 'environments.json');
    writeFileSync(
      environmentsFile,
      readFileSync(path.join(projectRoot(), 'config', 'environments.json'), 'utf8').replaceAll('http://127.0.0.1:8545', h.rpcUrl),
    );
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DEPLOYMENT: 'sandbox',
      DATABASE_URL: h.databaseUrl,
      TEMPORAL_ADDRESS: h.env.address,
      TEMPORAL_TASK_QUEUE: h.taskQueue,
      SERVICE_SECRET: TEST_SERVICE_SECRET,
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      LOG_LEVEL: 'silent',
      DATA_DIR: tempDir(),
      ENVIRONMENTS_FILE: environmentsFile,
      ...overrides,
    };
    for (const name of ['CUSTODY_MNEMONIC', 'CUSTODY_MNEMONIC_FILE', 'CUSTODY_PUBLIC_KEYS']) if (!(name in overrides)) delete env[name];
    return env;
  }

  async function start(roles: ('api' | 'worker')[], env: NodeJS.ProcessEnv): Promise<RunningService> {
    const h = await getHarness();
    const service = await startService({ config: loadConfig(env), logger: h.logger, roles, env });
    started.push(service);
    return service;
  }

  /** The public keys the harness's worker signs with, as an operator hands them to the API. */
  const harnessPublicKeys = async () => readFileSync(publicKeysFilePath((await getHarness()).custodyDataDir), 'utf8').trim();

  test('an API with the public keys alone and no seed reachable hands out Payment, deposit and vault addresses the worker signs for', async () => {
    const h = await getHarness();
    const env = await serviceEnv({ CUSTODY_PUBLIC_KEYS: await harnessPublicKeys() });
    const api = await start(['api'], env);
    assert.equal(api.chain.custody, undefined, 'an API-only process holds no signer');
    assert.deepEqual(
      readdirSync(env.DATA_DIR!).filter((f) => f === 'custody'),
      [],
      'nothing custody-related was written or looked up',
    );
    const baseUrl = api.apiUrl!;
    const cred = await newApp();

    const created = await call('/v2/accounts', { credential: cred, body: { externalUserId: uniqueUserId('keys') }, baseUrl });
    assert.equal(created.status, 201, created.text);
    const accountId = created.body.account.id as string;
    const wallet = await call(`/v2/accounts/${accountId}/connected-wallets`, {
      credential: cred,
      body: { chainId: h.chainId, address: privateKeyToAccount(generatePrivateKey()).address.toLowerCase() },
      baseUrl,
    });
    assert.equal(wallet.status, 201, wallet.text);
    const profile = await call(`/v2/accounts/${accountId}/settlement-profile`, {
      method: 'PUT',
      credential: cred,
      body: { connectedWalletId: wallet.body.connectedWallets[0].id },
      baseUrl,
    });
    assert.equal(profile.status, 200, profile.text);

    const payment = await call('/v2/payments', {
      credential: cred,
      headers: { 'idempotency-key': `keys-${process.pid}-${Date.now()}` },
      body: { intent: 'receive', amount: '10', assetCode: 'USDC', chainId: h.chainId, destination: { type: 'upa', accountId } },
      baseUrl,
    });
    assert.equal(payment.status, 201, payment.text);
    const deposit = await call(`/v2/accounts/${accountId}/deposit-addresses`, { credential: cred, body: { chainId: h.chainId }, baseUrl });
    assert.ok([200, 201].includes(deposit.status), deposit.text);
    const vault = await call(`/v2/accounts/${accountId}/vault`, { credential: cred, body: {}, baseUrl });
    assert.equal(vault.status, 201, vault.text);

    // The worker's signer (the harness's seed) signs for each address the API handed out.
    const signer = h.chain.custody;
    const escrowIndex = (await h.db.prisma.payment.findUniqueOrThrow({ where: { id: payment.body.payment.id } })).escrowIndex;
    assert.equal(
      payment.body.payment.funding.depositAddress.address.toLowerCase(),
      signer.signer({ purpose: 'escrow', index: escrowIndex }).address.toLowerCase(),
    );
    const depositIndex = (await h.db.prisma.depositAddress.findUniqueOrThrow({ where: { id: deposit.body.depositAddress.id } }))
      .custodyIndex;
    assert.equal(
      deposit.body.depositAddress.address.toLowerCase(),
      signer.signer({ purpose: 'deposit', index: depositIndex }).address.toLowerCase(),
    );
    const vaultIndex = (await h.db.prisma.vault.findUniqueOrThrow({ where: { id: vault.body.vault.id } })).custodyIndex;
    assert.equal(vault.body.vault.address.toLowerCase(), signer.signer({ purpose: 'vault', index: vaultIndex }).address.toLowerCase());

    assert.equal(existsSync(seedFilePath(env.DATA_DIR!)), false, 'no seed was made');
  });

  test('a production worker without a seed refuses to start, naming CUSTODY_MNEMONIC_FILE and CUSTODY_MNEMONIC', async () => {
    const env = await serviceEnv({ DEPLOYMENT: 'production' });
    await assert.rejects(start(['worker'], env), (err: Error) => {
      assert.match(err.message, /CUSTODY_MNEMONIC_FILE/);
      assert.match(err.message, /CUSTODY_MNEMONIC\b/);
      return true;
    });
    assert.equal(existsSync(seedFilePath(env.DATA_DIR!)), false, 'and it generated none');
  });

  test('an API whose public keys are not the seed the database was set up with refuses to start, saying what disagrees', async () => {
    const other = formatPublicKeys(createHdSigner({ mnemonic: OTHER_MNEMONIC }).publicKeys);
    const env = await serviceEnv({ CUSTODY_PUBLIC_KEYS: other });
    await assert.rejects(start(['api'], env), (err: Error) => {
      assert.match(err.message, /custody keys disagree with the database/);
      assert.match(err.message, /treasury\/0 is 0x[0-9a-f]{40} in custody_addresses, the public keys derive 0x[0-9a-f]{40}/);
      assert.match(err.message, /CUSTODY_PUBLIC_KEYS/);
      return true;
    });
  });

  test('a worker whose seed (a mounted file) is not what CUSTODY_PUBLIC_KEYS says refuses to start, naming the purposes that differ', async () => {
    const secret = path.join(tempDir(), 'seed');
    writeFileSync(secret, `${OTHER_MNEMONIC}\n`, { mode: 0o600 });
    const env = await serviceEnv({ CUSTODY_MNEMONIC_FILE: secret, CUSTODY_PUBLIC_KEYS: await harnessPublicKeys() });
    await assert.rejects(
      start(['worker'], env),
      /custody keys disagree: CUSTODY_PUBLIC_KEYS is not what the seed \(CUSTODY_MNEMONIC_FILE\) derives for escrow, deposit, treasury, fee, vault/,
    );
  });

  test('the API takes only the address book: no route or createApi dependency is typed to sign', () => {
    type ApiCustody = Parameters<typeof import('../../src/http/app').createApi>[0]['custody'];
    const signs: 'signer' extends keyof ApiCustody ? true : false = false;
    assert.equal(signs, false);
    const keys: CustodyPublicKeys = createHdSigner({ mnemonic: OTHER_MNEMONIC }).publicKeys;
    assert.doesNotMatch(formatPublicKeys(keys), /xprv/);
  });
});
