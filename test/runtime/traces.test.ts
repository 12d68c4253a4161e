import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { until } from '../support/until';
import { exitWithin, npmStart } from '../support/npm-start';
import { ancestry, isSql, otlpReceiver } from '../support/otlp-receiver';

const ROOT = path.resolve(__dirname, '../..');
const DATA_DIR = path.join(ROOT, '.data', 'traces-test');
const run = promisify(execFile);

describe('traces', () => {
  it(
    "a Payment's trace runs from the partner's request through its workflow's start, its workflow task and its activities, with their SQL, exported by OTLP",
    { timeout: 300_000 },
    async () => {
      const receiver = await otlpReceiver();
      const s = await npmStart(DATA_DIR, {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_SERVICE_NAME: 'partner-payments',
        OTEL_BSP_SCHEDULE_DELAY: '200',
      });
      // The CLI untraced: the trace under test is the service's.
      const cli = (args: string[]) =>
        run(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], {
          cwd: ROOT,
          env: { ...s.env, LOG_LEVEL: 'silent', OTEL_EXPORTER_OTLP_ENDPOINT: '' },
        });
      try {
        const { stdout } = await cli(['apps', 'create', '--environment', 'sandbox', '--name', 'traced']);
        const app = JSON.parse(stdout.trim()) as { appId: string; appSecret: string };
        const auth = `Basic ${Buffer.from(`${app.appId}:${app.appSecret}`).toString('base64')}`;
        const send = async (method: string, p: string, body: unknown, expected = method === 'PUT' ? 200 : 201) => {
          const res = await fetch(`${s.apiUrl}${p}`, {
            method,
            headers: { authorization: auth, 'content-type': 'application/json', 'idempotency-key': `traces-${p}-${Date.now()}` },
            body: JSON.stringify(body),
          });
          const text = await res.text();
          assert.equal(res.status, expected, `${p}: ${text}`);
          return JSON.parse(text) as Record<string, any>;
        };
        const post = (p: string, body: unknown) => send('POST', p, body);
        const config = (await (await fetch(`${s.apiUrl}/v2/partners/config`, { headers: { authorization: auth } })).json()) as any;
        const chainId = config.environments?.sandbox?.networks?.[0]?.chainId ?? config.networks?.[0]?.chainId;
        assert.ok(chainId, JSON.stringify(config).slice(0, 500));
        const accountId = (await post('/v2/accounts', { externalUserId: 'traced-user' })).account.id as string;
        const wallet = await post(`/v2/accounts/${accountId}/connected-wallets`, { chainId, address: `0x${'7'.repeat(40)}` });
        await send('PUT', `/v2/accounts/${accountId}/settlement-profile`, { connectedWalletId: wallet.connectedWallets[0].id });
        const created = await post('/v2/payments', {
          intent: 'receive',
          amount: '3',
          assetCode: 'USDC',
          chainId,
          destination: { type: 'upa', accountId },
        });
        const paymentId = created.payment.id as string;
        // Paid from the sandbox treasury, as a developer pays one: the workflow settles it, and its run ends.
        await cli(['sandbox', 'transfer', '--to', created.payment.funding.depositAddress.address, '--amount', '3']);
        await until(
          async () => {
            const res = await fetch(`${s.apiUrl}/v2/payments/${paymentId}`, { headers: { authorization: auth } });
            assert.ok(res.status < 500, `GET the Payment: ${res.status}`);
            return ((await res.json()) as { payment: { status: string } }).payment.status === 'succeeded';
          },
          `${paymentId} succeeded`,
          120_000,
        );

        const request = await until(
          () => receiver.spans.find((x) => x.name === 'POST /v2/payments' && x.service === 'partner-payments'),
          "the create's request span",
          60_000,
        );
        const inTrace = () => receiver.spans.filter((x) => x.traceId === request.traceId);
        // The workflow's own span ends with its run (the settlement confirmed): exported then.
        await until(
          (saw) => {
            saw(inTrace().map((x) => x.name));
            return inTrace().some((x) => x.name === 'RunWorkflow:paymentWorkflow');
          },
          `the end of ${paymentId}'s workflow run, in the create's trace`,
          120_000,
        );
        const spans = inTrace();
        const names = spans.map((x) => x.name);
        assert.equal(request.parentSpanId ?? '', '', "the partner's request starts the trace");
        // The create's named steps are spans of the request, the workflow's start under its own.
        for (const step of ['step.idempotency_claim', 'step.insert', 'step.workflow_start']) {
          const found = spans.find((x) => x.name === step);
          assert.equal(found && ancestry(found, spans)[0], 'POST /v2/payments', `${step} under the request: ${names.join(', ')}`);
        }
        const start = spans.find((x) => x.name === 'StartWorkflow:paymentWorkflow');
        assert.equal(start && ancestry(start, spans)[0], 'step.workflow_start');
        // Each activity descends from the workflow's run, which the start made, which the request made.
        const activities = spans.filter((x) => x.name.startsWith('RunActivity:'));
        assert.ok(activities.length >= 2, names.join(', '));
        for (const activity of activities) {
          const up = ancestry(activity, spans);
          for (const name of ['RunWorkflow:paymentWorkflow', 'StartWorkflow:paymentWorkflow', 'POST /v2/payments'])
            assert.ok(up.includes(name), `${activity.name} under ${name}: ${up.join(' < ')}`);
        }
        // Their SQL and RPC calls are in it too, the request's and the activities'.
        const sql = spans.filter(isSql);
        assert.ok(
          sql.some((x) => ancestry(x, spans)[0] === 'POST /v2/payments'),
          "the request's SQL",
        );
        assert.ok(
          sql.some((x) => ancestry(x, spans)[0]?.startsWith('RunActivity:')),
          "an activity's SQL",
        );
      } catch (err) {
        console.log(s.output().slice(-6000));
        throw err;
      } finally {
        process.kill(-s.child.pid!, 'SIGINT');
        await exitWithin(s, 60_000);
        await receiver.close();
      }
    },
  );
});
