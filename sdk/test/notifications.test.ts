// Notifications the gateway really sends, checked with the SDK's helpers and with the reference
// Standard Webhooks implementation: the PAGO webhook and postback of a sale, two signatures during a
// rotation, a test notification; and the README's example, run as written.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, mock, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { ADMIN_TOKEN, POSTBACK_SECRET } from '../../test/helpers/gateway.ts';
import { type ReceivedRequest, type Receiver, startReceiver } from '../../test/helpers/receiver.ts';
import { SellerClient, verifyPostback, verifyWebhook, WebhookVerificationError } from '../src/index.ts';
import { type Json, pixSale, type SdkBench, startBench } from './harness.ts';

const header = (r: ReceivedRequest, name: string) => r.headers[name] as string | undefined;

describe('notifications sent by the gateway, verified', () => {
  let bench: SdkBench;
  let rx: Receiver;
  before(async () => {
    bench = await startBench();
    rx = await startReceiver();
  });
  after(async () => {
    await rx?.close();
    await bench?.close();
  });

  test('the PAGO webhook and postback of a sale: Standard Webhooks (ours and the reference) and X-Signature', async () => {
    const { client } = await bench.seller();
    const { secret } = await client.getSigningSecret();
    await client.createWebhook({ url: rx.url('/hook-1'), types: ['TRANSACTION'] });
    const { sale } = await client.createSale(pixSale(15000, { postbackUrl: rx.url('/postback-1') }));
    await bench.operator.applyTransactionEvent(sale.id, { event: 'PAYMENT_CONFIRMED' });
    await bench.deliver();

    const [hook] = rx.requestsTo('/hook-1');
    assert.ok(hook, 'the webhook was delivered');
    const payload = verifyWebhook<Json>(hook.body, hook.headers, secret);
    assert.deepEqual([payload.id, payload.status, payload.type], [sale.id, 'PAGO', 'TRANSACTION']);
    const plain = Object.fromEntries(Object.entries(hook.headers).map(([k, v]) => [k, String(v)]));
    assert.deepEqual(new Webhook(secret).verify(hook.body, plain), payload, 'the reference implementation agrees');
    assert.equal(header(hook, 'webhook-id'), header(hook, 'x-event-id'));

    const [postback] = rx.requestsTo('/postback-1');
    assert.ok(postback, 'the postback was delivered');
    const signed = verifyPostback<Json>(postback.body, header(postback, 'x-signature'), POSTBACK_SECRET);
    assert.deepEqual([signed.id, signed.status], [sale.id, 'PAGO']);
    assert.deepEqual(verifyWebhook(postback.body, postback.headers, secret), signed, 'a postback carries Standard Webhooks headers too');
    assert.throws(
      () => verifyPostback(postback.body, header(postback, 'x-signature'), 'another-secret-0123456789abcdef0123'),
      WebhookVerificationError,
    );
    assert.throws(() => verifyWebhook(hook.body, hook.headers, `whsec_${Buffer.alloc(32, 1).toString('base64')}`), WebhookVerificationError);
  });

  test('after a rotation the gateway signs with both secrets; either verifies, in both implementations', async () => {
    const { client } = await bench.seller();
    const old = (await client.getSigningSecret()).secret;
    const hook = await client.createWebhook({ url: rx.url('/hook-2'), types: ['TRANSACTION'] });
    const current = (await client.rotateSigningSecret()).secret;
    await client.testWebhook(hook.id);
    await bench.deliver();

    const [sent] = rx.requestsTo('/hook-2');
    assert.ok(sent);
    assert.equal(header(sent, 'x-test-event'), 'true');
    assert.equal(header(sent, 'webhook-signature')?.split(' ').length, 2, 'two v1 signatures');
    const plain = Object.fromEntries(Object.entries(sent.headers).map(([k, v]) => [k, String(v)]));
    for (const secret of [old, current]) {
      const payload: Json = verifyWebhook(sent.body, sent.headers, secret);
      assert.equal(payload.type, 'TRANSACTION');
      assert.deepEqual(new Webhook(secret).verify(sent.body, plain), payload);
    }
  });
});

describe('the README example', () => {
  let bench: SdkBench;
  before(async () => {
    bench = await startBench();
  });
  after(async () => {
    mock.restoreAll();
    await bench?.close();
  });

  test('is the code of sdk/examples/pix-sale.ts, which runs: a PIX sale, paid, its webhook received and verified, the webhook removed', async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const example = readFileSync(new URL('../examples/pix-sale.ts', import.meta.url), 'utf8');
    const block = /<!-- example -->\s*```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    assert.equal(block, example.replace("from '../src/index.ts'", "from 'pagar-gateway-sdk'"), 'the README shows the file as it is');

    const { keys } = await bench.seller();
    Object.assign(process.env, {
      GATEWAY_URL: bench.baseUrl,
      PUBLIC_KEY: keys.publicKey,
      PRIVATE_KEY: keys.privateKey,
      ADMIN_TOKEN,
      RECEIVER_PORT: '0',
    });
    const logged: unknown[][] = [];
    mock.method(console, 'log', (...args: unknown[]) => logged.push(args));
    let finished = false;
    const run = import('../examples/pix-sale.ts').finally(() => {
      finished = true;
    });
    // The test gateway has no background workers: deliver by hand until the example is done (bounded).
    const deadline = Date.now() + 20_000;
    for (let i = 0; i < 2_000 && !finished && Date.now() < deadline; i++) {
      await bench.deliver();
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.ok(finished, 'the example finished within 20 s');
    await run;
    mock.restoreAll();

    assert.equal(logged[0]?.[0], 'PIX copia e cola:');
    assert.match(String(logged[0]?.[1]), /^000201/);
    assert.equal(logged[1]?.[0], 'verified webhook:');
    const payload = logged[1]?.[1] as Json;
    assert.deepEqual([payload.status, payload.type, payload.userId], ['PAGO', 'TRANSACTION', keys.id]);
    const left = await new SellerClient({ baseUrl: bench.baseUrl, publicKey: keys.publicKey, privateKey: keys.privateKey }).listWebhooks();
    assert.deepEqual(left.data, [], 'the example removed the webhook it registered');
  });
});
