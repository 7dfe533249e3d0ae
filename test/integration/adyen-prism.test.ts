// The gateway with CARD_PROVIDER=adyen against Prism serving the official Checkout file directly:
// Prism checks every request the connector sends and says what it finds in the sl-violations header,
// which a tap in front of it keeps. Prism answers with the file's own examples; the tap asks for the
// card-direct one (resultCode Authorised) where a test wants an authorisation.
import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { adyenHmac } from '../helpers/adyen-double.ts';
import { ADYEN_CHECKOUT_FILE, checkAdyenNotification } from '../helpers/adyen-spec.ts';
import { cardExample } from '../helpers/fixtures.ts';
import { adminHeaders, type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';
import { prismCli, startPrism } from '../helpers/prism.ts';

interface Seen {
  request: string;
  status: number;
  violations: { location: string[]; message: string }[];
}

const prism = prismCli();
const HMAC_KEY = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
const ACCOUNT = 'YOUR_MERCHANT_ACCOUNT';
const basic = `Basic ${Buffer.from('adyen:notification-password').toString('base64')}`;

describe('CARD_PROVIDER=adyen against Prism serving adyen-checkout-v71.json', { skip: 'unavailable' in prism ? prism.unavailable : false }, () => {
  let server: Awaited<ReturnType<typeof startPrism>>;
  let tap: ReturnType<typeof createServer>;
  let gw: Gateway;
  let seller: SellerKeys;
  const seen: Seen[] = [];
  let example: string | null = 'card-direct';

  before(async () => {
    server = await startPrism({ file: ADYEN_CHECKOUT_FILE, timeoutMs: 60_000 });
    const target = new URL(server.url);
    tap = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const headers = { ...req.headers };
        if (req.url === '/payments' && example) headers.prefer = `example=${example}`;
        const forward = httpRequest(
          { host: target.hostname, port: target.port, method: req.method, path: req.url, headers, timeout: 10_000 },
          (answer) => {
            const header = answer.headers['sl-violations'];
            const violations = typeof header === 'string' ? JSON.parse(header.slice(header.indexOf('['))) : [];
            seen.push({ request: `${req.method} ${req.url}`, status: answer.statusCode ?? 0, violations });
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        forward.on('error', () => res.writeHead(502).end());
        forward.end(Buffer.concat(chunks));
      });
    });
    await new Promise<void>((resolve) => tap.listen(0, '127.0.0.1', resolve));
    gw = await startGateway({
      env: {
        CARD_PROVIDER: 'adyen',
        ADYEN_CHECKOUT_URL: `http://127.0.0.1:${(tap.address() as AddressInfo).port}`,
        ADYEN_API_KEY: 'AQE-test-key',
        ADYEN_MERCHANT_ACCOUNT: ACCOUNT,
        ADYEN_HMAC_KEY: HMAC_KEY,
        ADYEN_NOTIFICATION_USERNAME: 'adyen',
        ADYEN_NOTIFICATION_PASSWORD: 'notification-password',
      },
    });
    seller = await gw.createSeller();
  });
  after(async () => {
    await gw?.close();
    await new Promise((resolve) => tap?.close(resolve));
    await server?.close();
  });

  function assertClean(from: number, what: string) {
    assert.ok(seen.length > from, `${what}: a request reached Prism`);
    for (const s of seen.slice(from)) {
      assert.deepEqual(s.violations, [], `${what}: ${s.request} (${s.status})`);
      assert.ok(s.status < 400, `${what}: ${s.request} answered ${s.status}: ${server.output().slice(-1500)}`);
    }
  }

  const read = async (id: number) => (await gw.app.inject({ method: 'GET', url: `/api/transactions/${id}`, headers: seller.headers })).json();

  test('a credit sale in 3 instalments: Prism takes the payment, the signed AUTHORISATION makes it PAGO, a partial refund is taken', async () => {
    let from = seen.length;
    const res = await gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: cardExample() });
    assert.equal(res.statusCode, 201, res.body);
    const id = res.json().sale.id as number;
    assertClean(from, 'POST /payments');
    const processing = await read(id);
    assert.equal(processing.status, 'EM_PROCESSAMENTO');
    const psp = processing.externalTransactionId as string;
    assert.match(psp, /^[A-Z0-9]{16}$/, 'the pspReference from the file’s card-direct example');

    const item = {
      amount: { currency: 'BRL', value: 16000 },
      eventCode: 'AUTHORISATION',
      eventDate: '2026-11-23T12:00:00+00:00',
      merchantAccountCode: ACCOUNT,
      merchantReference: String(id),
      pspReference: psp,
      success: 'true',
    };
    const body = {
      live: 'false',
      notificationItems: [{ NotificationRequestItem: { additionalData: { hmacSignature: adyenHmac(item, HMAC_KEY) }, ...item } }],
    };
    assert.deepEqual(checkAdyenNotification(body), []);
    const notified = await gw.app.inject({ method: 'POST', url: '/providers/adyen/notifications', headers: { authorization: basic }, payload: body });
    assert.equal(notified.statusCode, 200, notified.body);
    assert.equal(notified.body, '[accepted]');
    assert.equal((await read(id)).status, 'PAGO');

    from = seen.length;
    const refund = await gw.app.inject({ method: 'POST', url: `/api/transactions/${id}/refund`, headers: seller.headers, payload: { amount: 5000 } });
    assert.equal(refund.statusCode, 201, refund.body);
    assert.equal(refund.json().status, 'PENDING', 'Adyen took the refund; its REFUND notification will settle it');
    assertClean(from, 'POST /payments/{psp}/refunds');
    const verify = (await gw.app.inject({ method: 'GET', url: '/admin/ledger/verify', headers: adminHeaders })).json();
    assert.equal(verify.ok, true);
  });

  test('a result that needs a shopper (3-D Secure redirect) ends FALHA, and the payment is cancelled at Prism', async () => {
    example = 'card-3d-secure-redirect';
    const from = seen.length;
    const res = await gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: cardExample() });
    assert.equal(res.statusCode, 201, res.body);
    const sale = await read(res.json().sale.id);
    assert.equal(sale.status, 'FALHA');
    assert.equal(sale.externalTransactionId, 'JLCMPCQ8HXSKGK82');
    assert.deepEqual(
      seen.slice(from).map((s) => s.request),
      ['POST /payments', 'POST /payments/JLCMPCQ8HXSKGK82/cancels'],
    );
    assertClean(from, 'POST /payments then /cancels');
  });
});
