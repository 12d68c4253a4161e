import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(__dirname, '../..');
const run = promisify(execFile);

/**
 * What the fuzzer needs to reach past 404: real ids for every path parameter, and the credentials of
 * each security scheme. Exported to schemathesis.toml as environment variables (ST_*).
 */
export interface Fixtures {
  appId: string;
  appSecret: string;
  accountId: string;
  externalUserId: string;
  paymentId: string;
  paymentSecret: string;
  optionId: string;
  clientToken: string;
  depositAddressId: string;
  bankAccountId: string;
  vaultId: string;
  /** The payer's account, whose vault vaultId is. */
  vaultAccountId: string;
  /** A Payment only the sandbox clock's operation moves. */
  clockPaymentId: string;
}

/** `npm run cli -- <args>` against the stack's database; its one JSON line. */
export async function cli(env: NodeJS.ProcessEnv, args: string[]): Promise<any> {
  const { stdout } = await run('npm', ['run', '-s', 'cli', '--', ...args], { cwd: ROOT, env, maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

function client(apiUrl: string, auth: string) {
  return async (method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<any> => {
    const res = await fetch(`${apiUrl}${route}`, {
      method,
      headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`fixture ${method} ${route} answered ${res.status}: ${text}`);
    return JSON.parse(text);
  };
}

/** A merchant account with a settlement profile, two Payments to it (one for the sandbox clock), a deposit address, a linked bank account, and a payer's client token and vault. */
export async function createFixtures(apiUrl: string, env: NodeJS.ProcessEnv): Promise<Fixtures> {
  const cred = await cli(env, ['apps', 'create', '--environment', 'sandbox', '--name', 'schemathesis']);
  const api = client(apiUrl, `Basic ${Buffer.from(`${cred.appId}:${cred.appSecret}`).toString('base64')}`);
  const { account } = await api('POST', '/v2/accounts', { externalUserId: 'schemathesis-merchant' });
  const bundle = await api('POST', `/v2/accounts/${account.id}/connected-wallets`, {
    chainId: 31337,
    address: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
  });
  await api('PUT', `/v2/accounts/${account.id}/settlement-profile`, { connectedWalletId: bundle.connectedWallets[0].id });
  await api('PUT', `/v2/accounts/${account.id}/payment-acceptance`, { publicReceiveEnabled: true, expectedVersion: 1 });
  const created = await api(
    'POST',
    '/v2/payments',
    { intent: 'receive', amount: '12.50', assetCode: 'USDC', chainId: 31337, destination: { type: 'upa', accountId: account.id } },
    { 'idempotency-key': 'schemathesis-payment-1' },
  );
  const clocked = await api(
    'POST',
    '/v2/payments',
    { intent: 'receive', amount: '1.25', assetCode: 'USDC', chainId: 31337, destination: { type: 'upa', accountId: account.id } },
    { 'idempotency-key': 'schemathesis-payment-clock' },
  );
  const { depositAddress } = await api('POST', `/v2/accounts/${account.id}/deposit-addresses`, { chainId: 31337 });
  const { bankAccount } = await api(
    'POST',
    `/v2/accounts/${account.id}/bank-accounts`,
    {
      country: 'US',
      currency: 'USD',
      accountHolderName: 'Ada Lovelace',
      bankName: 'JPMorgan Chase Bank, N.A.',
      bankCode: 'CHASUS33',
      routingNumber: '021000021',
      accountNumber: '000123456789',
      accountType: 'checking',
    },
    { 'idempotency-key': 'schemathesis-bank-1' },
  );
  // The recipient is never the payer: the client token belongs to a second account, which the first read binds.
  const { account: payer } = await api('POST', '/v2/accounts', { externalUserId: 'schemathesis-payer' });
  const token = await api('POST', '/v2/client/auth/exchange', { accountId: payer.id });
  // The payer's vault, so the policy dry run reaches past 404 (without a policy, it denies).
  const { vault } = await api('POST', `/v2/accounts/${payer.id}/vault`, {});
  const clientApi = client(apiUrl, `Bearer ${token.accessToken}`);
  const read = await clientApi('GET', `/v2/client/me/payments/${created.payment.id}`, undefined, {
    'x-svc-payment-secret': created.checkout.clientSecret,
  });
  return {
    appId: cred.appId,
    appSecret: cred.appSecret,
    accountId: account.id,
    externalUserId: account.externalUserId,
    paymentId: created.payment.id,
    paymentSecret: created.checkout.clientSecret,
    optionId: read.options[0].id,
    clientToken: token.accessToken,
    depositAddressId: depositAddress.id,
    bankAccountId: bankAccount.id,
    vaultId: vault.id,
    vaultAccountId: payer.id,
    clockPaymentId: clocked.payment.id,
  };
}
