import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  ADYEN_3DS_GET_CARD,
  ADYEN_3DS_POST_CARD,
  ADYEN_ERROR_CARD,
  ADYEN_REFUSED_CARD,
  type AdyenDouble,
  adyenHmac,
  type NotificationItemInput,
  startAdyenDouble,
} from '../helpers/adyen-double.ts';
import { checkAdyenNotification, checkAdyenRequest, checkAdyenResponse } from '../helpers/adyen-spec.ts';

const VISA = '4111111111111111';

function paymentBody(double: AdyenDouble, value: number, number = VISA, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    amount: { currency: 'BRL', value },
    merchantAccount: double.merchantAccount,
    reference: `sale-${value}-${Math.random().toString(36).slice(2, 8)}`,
    paymentMethod: { type: 'scheme', number, expiryMonth: '03', expiryYear: '2030', cvc: '737', holderName: 'Maria Silva' },
    returnUrl: 'https://gateway.example/return',
    shopperInteraction: 'Ecommerce',
    ...extra,
  };
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/** One call to the double, checked against the Checkout file on both sides (request and answer). */
async function call(
  double: AdyenDouble,
  path: string,
  body: unknown,
  o: { key?: string; apiKey?: string; unchecked?: boolean } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-api-key': o.apiKey ?? double.apiKey };
  if (o.key) headers['idempotency-key'] = o.key;
  if (!o.unchecked) assert.deepEqual(checkAdyenRequest({ method: 'POST', path, headers, body }), [], `request to ${path}`);
  const res = await fetch(`${double.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const answer = (await res.json()) as Record<string, unknown>;
  const violations = checkAdyenResponse({
    method: 'POST',
    path,
    status: res.status,
    body: answer,
    contentType: res.headers.get('content-type') ?? undefined,
  });
  assert.deepEqual(violations, [], `answer ${res.status} to ${path}: ${JSON.stringify(answer)}`);
  return { status: res.status, body: answer, headers: res.headers };
}

describe('adyenHmac', () => {
  it("gives Adyen's published test vector", () => {
    const item = {
      pspReference: '7914073381342284',
      merchantAccountCode: 'TestMerchant',
      merchantReference: 'TestPayment-1407325143704',
      amount: { value: 1130, currency: 'EUR' },
      eventCode: 'AUTHORISATION',
      success: 'true',
    };
    assert.equal(adyenHmac(item, 'DFB1EB5485895CFA84146406857104ABB4CBCABDC8AAF103A624C8F6A3EAAB00'), 'Ny9gS2veKo5E4w8/OL6xz1/wvT/hYkAXy1xNc/QvO4I=');
  });
});

describe('Adyen Checkout double', () => {
  let double: AdyenDouble;
  before(async () => {
    double = await startAdyenDouble();
  });
  after(() => double.close());

  it('authorises a card (automatic capture) and refunds it partially, never beyond what was captured', async () => {
    const pay = await call(double, '/payments', paymentBody(double, 10_000));
    assert.equal(pay.status, 200);
    assert.equal(pay.body.resultCode, 'Authorised');
    const psp = pay.body.pspReference as string;
    assert.match(psp, /^[A-Z0-9]{16}$/);
    assert.deepEqual(pay.body.amount, { currency: 'BRL', value: 10_000 });
    assert.equal(double.payments.get(psp)?.status, 'Authorised');
    assert.equal(double.payments.get(psp)?.captured, true);

    const refund = await call(
      double,
      `/payments/${psp}/refunds`,
      { amount: { currency: 'BRL', value: 4_000 }, merchantAccount: double.merchantAccount, reference: 'r1' },
      { key: 'k-r1' },
    );
    assert.equal(refund.status, 201);
    assert.equal(refund.body.status, 'received');
    assert.equal(refund.body.paymentPspReference, psp);
    assert.equal(refund.body.reference, 'r1');
    assert.match(refund.body.pspReference as string, /^[A-Z0-9]{16}$/);
    assert.notEqual(refund.body.pspReference, psp);
    assert.equal(double.payments.get(psp)?.refundedAmount, 4_000);

    const tooMuch = await call(double, `/payments/${psp}/refunds`, {
      amount: { currency: 'BRL', value: 6_001 },
      merchantAccount: double.merchantAccount,
    });
    assert.equal(tooMuch.status, 422);
    assert.equal(tooMuch.body.errorType, 'validation');
    assert.equal(double.payments.get(psp)?.refundedAmount, 4_000);
  });

  it('with manualCapture, refuses a refund before the capture and a cancel after it; cancels an uncaptured payment', async () => {
    const manual = { additionalData: { manualCapture: 'true' } };
    const psp = (await call(double, '/payments', paymentBody(double, 5_000, VISA, manual))).body.pspReference as string;
    assert.equal(double.payments.get(psp)?.captured, false);
    const early = await call(double, `/payments/${psp}/refunds`, {
      amount: { currency: 'BRL', value: 100 },
      merchantAccount: double.merchantAccount,
    });
    assert.equal(early.status, 422);
    const capture = await call(double, `/payments/${psp}/captures`, {
      amount: { currency: 'BRL', value: 5_000 },
      merchantAccount: double.merchantAccount,
    });
    assert.equal(capture.status, 201);
    assert.deepEqual(capture.body.amount, { currency: 'BRL', value: 5_000 });
    assert.equal(double.payments.get(psp)?.captured, true);
    assert.equal((await call(double, `/payments/${psp}/cancels`, { merchantAccount: double.merchantAccount })).status, 422);

    const other = (await call(double, '/payments', paymentBody(double, 700, VISA, manual))).body.pspReference as string;
    const cancel = await call(double, `/payments/${other}/cancels`, { merchantAccount: double.merchantAccount, reference: 'c1' });
    assert.equal(cancel.status, 201);
    assert.equal(cancel.body.status, 'received');
    assert.equal(double.payments.get(other)?.status, 'Cancelled');

    const third = (await call(double, '/payments', paymentBody(double, 800))).body.pspReference as string;
    assert.equal((await call(double, `/payments/${third}/reversals`, { merchantAccount: double.merchantAccount })).status, 201);
    assert.equal(double.payments.get(third)?.refundedAmount, 800);
  });

  it('refuses 4000000000000002 and errs on 4000000000000119, with a refusalReason', async () => {
    const refused = await call(double, '/payments', paymentBody(double, 1_000, ADYEN_REFUSED_CARD));
    assert.equal(refused.status, 200);
    assert.equal(refused.body.resultCode, 'Refused');
    assert.equal(refused.body.refusalReason, 'Refused');
    assert.equal(double.payments.get(refused.body.pspReference as string)?.status, 'Refused');
    const error = await call(double, '/payments', paymentBody(double, 1_000, ADYEN_ERROR_CARD));
    assert.equal(error.body.resultCode, 'Error');
    assert.equal(typeof error.body.refusalReason, 'string');
    // Nothing but the raw call log holds the card.
    assert.ok(!JSON.stringify([...double.payments.values()]).includes(ADYEN_REFUSED_CARD));
  });

  it('answers a wrong API key with 401, a wrong merchant account with 403 and an unknown payment with 422, as ServiceErrors', async () => {
    const unauthorised = await call(double, '/payments', paymentBody(double, 1_000), { apiKey: 'wrong', unchecked: true });
    assert.equal(unauthorised.status, 401);
    assert.deepEqual(Object.keys(unauthorised.body).sort(), ['errorCode', 'errorType', 'message', 'status']);
    assert.equal(unauthorised.body.status, 401);
    assert.equal(unauthorised.body.errorType, 'security');
    const forbidden = await call(double, '/payments', { ...paymentBody(double, 1_000), merchantAccount: 'SomeoneElse' });
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.errorCode, '901');
    const unknown = await call(double, '/payments/ABCDEFGHIJKLMNOP/captures', {
      amount: { currency: 'BRL', value: 1 },
      merchantAccount: double.merchantAccount,
    });
    assert.equal(unknown.status, 422);
    assert.equal(unknown.body.errorCode, '167');
    const noReturnUrl = paymentBody(double, 1_000);
    delete noReturnUrl.returnUrl;
    assert.equal((await call(double, '/payments', noReturnUrl, { unchecked: true })).status, 422);
  });

  it('replays the first answer for a repeated Idempotency-Key, and records every call', async () => {
    const body = paymentBody(double, 2_500);
    const before = double.requests.length;
    const first = await call(double, '/payments', body, { key: 'idem-1' });
    const again = await call(double, '/payments', body, { key: 'idem-1' });
    assert.equal(again.body.pspReference, first.body.pspReference);
    assert.equal(again.headers.get('idempotency-key'), 'idem-1');
    assert.equal(double.requests.length, before + 2);
    assert.equal(double.requests.at(-1)?.headers['idempotency-key'], 'idem-1');
    assert.equal(double.requests.at(-1)?.path, '/payments');
    assert.equal([...double.payments.values()].filter((p) => p.reference === body.reference).length, 1);
    const reused = await call(double, '/payments', { ...body, reference: 'another' }, { key: 'idem-1' });
    assert.equal(reused.status, 422);
  });

  it("failNext('payments', 500) answers 500 once, then the operation works again", async () => {
    double.failNext('payments', 500);
    const body = paymentBody(double, 3_000);
    const failed = await call(double, '/payments', body, { key: 'idem-500' });
    assert.equal(failed.status, 500);
    assert.equal(failed.body.status, 500);
    const retried = await call(double, '/payments', body, { key: 'idem-500' });
    assert.equal(retried.status, 200);
    assert.equal(retried.body.resultCode, 'Authorised');
  });

  it("failNext 'drop' destroys the socket; 'hang' never answers until close(), which ends it promptly", async () => {
    const local = await startAdyenDouble();
    local.failNext('payments', 'drop');
    const init = (value: number) => ({
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': local.apiKey },
      body: JSON.stringify(paymentBody(local, value)),
    });
    await assert.rejects(fetch(`${local.url}/payments`, init(1)));
    local.failNext('captures', 'hang');
    local.failNext('payments', 'hang', 2);
    const hung = [fetch(`${local.url}/payments`, init(2)), fetch(`${local.url}/payments`, init(3))];
    const outcome = await Promise.race([Promise.allSettled(hung).then(() => 'answered'), new Promise((r) => setTimeout(() => r('hanging'), 300))]);
    assert.equal(outcome, 'hanging');
    assert.equal(local.requests.length, 3);
    const started = Date.now();
    await local.close();
    for (const r of await Promise.allSettled(hung)) assert.equal(r.status, 'rejected');
    assert.ok(Date.now() - started < 2_500, 'close() is bounded');
    assert.equal(local.payments.size, 0);
  });
});

describe('Adyen Checkout double: 3-D Secure (redirect flow)', () => {
  let double: AdyenDouble;
  before(async () => {
    double = await startAdyenDouble();
  });
  after(() => double.close());

  const browserInfo = {
    acceptHeader: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    colorDepth: 24,
    javaEnabled: false,
    language: 'pt-BR',
    screenHeight: 844,
    screenWidth: 390,
    timeZoneOffset: 180,
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0',
  };
  const threeDS = (attemptAuthentication?: string) => ({
    channel: 'Web',
    origin: 'https://pagamentos.example.com',
    returnUrl: 'https://pagamentos.example.com/checkout/3ds/TOKEN/return',
    browserInfo,
    shopperIP: '203.0.113.7',
    authenticationData: {
      ...(attemptAuthentication ? { attemptAuthentication } : {}),
      threeDSRequestData: { nativeThreeDS: 'disabled' },
    },
  });
  const redirected = async (number: string, attempt = 'always') => {
    const pay = await call(double, '/payments', paymentBody(double, 4_990, number, threeDS(attempt)), { key: `pay-${Math.random()}` });
    assert.equal(pay.status, 200);
    assert.equal(pay.body.resultCode, 'RedirectShopper', JSON.stringify(pay.body));
    return { psp: pay.body.pspReference as string, action: pay.body.action as Record<string, unknown>, body: pay.body };
  };
  const details = (redirectResult: string, key?: string) => call(double, '/payments/details', { details: { redirectResult } }, key ? { key } : {});

  it('asks for the shopper when the issuer wants it: a GET redirect, or a POST form with its data (CheckoutRedirectAction)', async () => {
    const get = await redirected(ADYEN_3DS_GET_CARD);
    assert.match(get.psp, /^[A-Z0-9]{16}$/);
    assert.equal(typeof get.body.merchantReference, 'string');
    assert.deepEqual(Object.keys(get.action).sort(), ['method', 'paymentMethodType', 'type', 'url']);
    assert.equal(get.action.type, 'redirect');
    assert.equal(get.action.method, 'GET');
    assert.match(get.action.url as string, /^http:\/\/127\.0\.0\.1:\d+\/checkoutshopper\/threeDS\/redirect\?MD=[A-Za-z0-9_-]+$/);
    assert.equal(double.payments.get(get.psp)?.status, 'RedirectShopper');

    const post = await redirected(ADYEN_3DS_POST_CARD);
    assert.equal(post.action.method, 'POST');
    assert.match(post.action.url as string, /^http:\/\/127\.0\.0\.1:\d+\/acs\/authenticate$/);
    const data = post.action.data as Record<string, string>;
    assert.deepEqual(Object.keys(data).sort(), ['MD', 'PaReq', 'TermUrl']);
    assert.match(
      data.TermUrl!,
      /^http:\/\/127\.0\.0\.1:\d+\/checkoutshopper\/threeDS\/return$/,
      'the issuer answers Adyen, which sends the shopper to returnUrl',
    );
    // Credit without "always" (Dynamic 3-D Secure): the issuer still asks.
    assert.equal((await redirected(ADYEN_3DS_GET_CARD, '')).action.method, 'GET');
  });

  it('decides at once as before: no browserInfo, attemptAuthentication "never", or a card without 3-D Secure', async () => {
    const plain = await call(
      double,
      '/payments',
      paymentBody(double, 1_000, ADYEN_3DS_GET_CARD, { authenticationData: { attemptAuthentication: 'always' } }),
    );
    assert.equal(plain.body.resultCode, 'Authorised');
    assert.equal(plain.body.action, undefined);
    const never = await call(
      double,
      '/payments',
      paymentBody(double, 1_000, ADYEN_3DS_GET_CARD, { ...threeDS(), authenticationData: { attemptAuthentication: 'never' } }),
    );
    assert.equal(never.body.resultCode, 'Authorised');
    const notEnrolled = await call(double, '/payments', paymentBody(double, 1_000, VISA, threeDS('always')));
    assert.equal(notEnrolled.body.resultCode, 'Authorised');
    assert.equal(double.payments.get(notEnrolled.body.pspReference as string)?.captured, true);
  });

  it('/payments/details: authenticated → Authorised (captured), replayed by its key; another request with the result is refused', async () => {
    const { psp } = await redirected(ADYEN_3DS_GET_CARD);
    const result = double.issuerReturn(psp, 'authenticated');
    const first = await details(result, 'details-1');
    assert.equal(first.status, 200);
    assert.deepEqual(
      { ...first.body },
      { amount: { currency: 'BRL', value: 4_990 }, merchantReference: first.body.merchantReference, pspReference: psp, resultCode: 'Authorised' },
    );
    assert.equal(first.headers.get('idempotency-key'), 'details-1');
    assert.equal(double.payments.get(psp)?.status, 'Authorised');
    assert.equal(double.payments.get(psp)?.captured, true);
    const again = await details(result, 'details-1');
    assert.deepEqual(again.body, first.body, 'the same key and body: the first answer');
    const other = await details(result, 'details-2');
    assert.equal(other.status, 422, 'a redirectResult is good for one request');
    assert.equal((await details(result, 'details-1')).status, 200);
    const reused = await call(double, '/payments/details', { details: { redirectResult: 'something else' } }, { key: 'details-1' });
    assert.equal(reused.status, 422);
    assert.equal(reused.body.errorCode, '704');
    assert.throws(() => double.issuerReturn(psp, 'authenticated'), /not waiting/);
    // The authorised payment is Adyen's like any other: refundable.
    const refund = await call(double, `/payments/${psp}/refunds`, {
      amount: { currency: 'BRL', value: 990 },
      merchantAccount: double.merchantAccount,
    });
    assert.equal(refund.status, 201);
  });

  it('/payments/details: refused → Refused "3D Not Authenticated"; error → Error; manual capture kept; unknown or missing result → 422', async () => {
    const refused = await redirected(ADYEN_3DS_POST_CARD);
    const no = await details(double.issuerReturn(refused.psp, 'refused'));
    assert.deepEqual(
      [no.status, no.body.resultCode, no.body.refusalReason, no.body.pspReference],
      [200, 'Refused', '3D Not Authenticated', refused.psp],
    );
    assert.equal(double.payments.get(refused.psp)?.status, 'Refused');

    const failed = await redirected(ADYEN_3DS_GET_CARD);
    const error = await details(double.issuerReturn(failed.psp, 'error'));
    assert.deepEqual([error.body.resultCode, error.body.pspReference], ['Error', failed.psp]);
    assert.equal(typeof error.body.refusalReason, 'string');

    const manual = await call(
      double,
      '/payments',
      paymentBody(double, 2_000, ADYEN_3DS_GET_CARD, { ...threeDS('always'), additionalData: { manualCapture: 'true' } }),
    );
    const psp = manual.body.pspReference as string;
    assert.equal((await details(double.issuerReturn(psp, 'authenticated'))).body.resultCode, 'Authorised');
    assert.equal(double.payments.get(psp)?.captured, false, 'left to capture');

    assert.equal((await details('never-issued')).status, 422);
    const empty = await call(double, '/payments/details', { details: {} });
    assert.equal(empty.status, 422);
    assert.equal((await call(double, '/payments/details', {}, { unchecked: true })).status, 422);
  });

  it("failNext('details', 500) answers 500 once, and the same request then works (a 5xx is not kept)", async () => {
    const { psp } = await redirected(ADYEN_3DS_GET_CARD);
    const result = double.issuerReturn(psp, 'authenticated');
    double.failNext('details', 500);
    assert.equal((await details(result, 'details-500')).status, 500);
    assert.equal((await details(result, 'details-500')).body.resultCode, 'Authorised');
  });
});

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

describe('Adyen notification sender', () => {
  let double: AdyenDouble;
  const received: Received[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('[accepted]');
    });
  });
  let target = '';
  before(async () => {
    double = await startAdyenDouble({ username: 'adyen', password: 's3cret' });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    target = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/adyen`;
  });
  after(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await double.close();
  });

  it('POSTs a signed notification with HTTP Basic, and a tampered one whose HMAC does not verify', async () => {
    const item: NotificationItemInput = {
      eventCode: 'AUTHORISATION',
      success: true,
      pspReference: 'ABCDEFGHIJKLMNOP',
      merchantReference: 'sale-1',
      amount: { value: 1_000 },
    };
    const answer = await double.notify(target, item);
    assert.deepEqual(answer, { status: 200, body: '[accepted]' });
    const got = received.at(-1)!;
    assert.equal(got.headers.authorization, `Basic ${Buffer.from('adyen:s3cret').toString('base64')}`);
    assert.match(got.headers['content-type'] ?? '', /^application\/json/);
    const body = JSON.parse(got.body);
    assert.deepEqual(checkAdyenNotification(body), []);
    assert.equal(body.live, 'false');
    const sent = body.notificationItems[0].NotificationRequestItem;
    assert.equal(sent.merchantAccountCode, double.merchantAccount);
    assert.deepEqual(sent.amount, { currency: 'BRL', value: 1_000 });
    assert.equal(sent.success, 'true');
    assert.equal(sent.additionalData.hmacSignature, adyenHmac(sent, double.hmacKeyHex));

    await double.notify(target, item, { tamperHmac: true, password: 'wrong' });
    const tampered = JSON.parse(received.at(-1)!.body).notificationItems[0].NotificationRequestItem;
    assert.notEqual(tampered.additionalData.hmacSignature, adyenHmac(tampered, double.hmacKeyHex));
    assert.equal(received.at(-1)!.headers.authorization, `Basic ${Buffer.from('adyen:wrong').toString('base64')}`);
  });

  const psp = 'QWERTYUIOPASDFGH';
  const cases: NotificationItemInput[] = [
    { eventCode: 'AUTHORISATION', success: false, pspReference: psp, merchantReference: 's', amount: { value: 10 }, reason: 'Refused' },
    { eventCode: 'CAPTURE', success: true, pspReference: 'CAPTURE000000001', originalReference: psp, merchantReference: 's', amount: { value: 10 } },
    { eventCode: 'REFUND', success: true, pspReference: 'REFUND0000000001', originalReference: psp, merchantReference: 's', amount: { value: 5 } },
    {
      eventCode: 'CANCELLATION',
      success: true,
      pspReference: 'CANCEL0000000001',
      originalReference: psp,
      merchantReference: 's',
      amount: { value: 10 },
    },
    ...(['NOTIFICATION_OF_CHARGEBACK', 'CHARGEBACK', 'SECOND_CHARGEBACK', 'CHARGEBACK_REVERSED'] as const).map((eventCode) => ({
      eventCode,
      success: true,
      pspReference: `${eventCode.slice(0, 8)}00000000`.slice(0, 16),
      originalReference: psp,
      merchantReference: 's',
      amount: { value: 10, currency: 'BRL' },
      reason: 'Fraud',
      additionalData: {
        disputeStatus: eventCode === 'CHARGEBACK_REVERSED' ? 'Won' : 'Undefended',
        chargebackReasonCode: '10.4',
        chargebackSchemeCode: 'visa',
      },
    })),
  ];
  for (const item of cases) {
    it(`builds a ${item.eventCode} body valid against the webhooks file, signed with the key`, () => {
      const body = double.notificationBody(item) as {
        notificationItems: { NotificationRequestItem: Record<string, unknown> & { additionalData: Record<string, string> } }[];
      };
      assert.deepEqual(checkAdyenNotification(body), []);
      const sent = body.notificationItems[0]!.NotificationRequestItem;
      assert.equal(sent.additionalData.hmacSignature, adyenHmac(sent, double.hmacKeyHex));
      assert.equal(sent.originalReference, item.originalReference);
    });
  }

  it('refuses to put originalReference in an AUTHORISATION item (the file has no such field there) or an unknown event code', () => {
    const item: NotificationItemInput = {
      eventCode: 'AUTHORISATION',
      success: true,
      pspReference: psp,
      originalReference: 'X',
      merchantReference: 's',
      amount: { value: 1 },
    };
    assert.throws(() => double.notificationBody(item), /originalReference/);
    assert.throws(() => double.notificationBody({ ...item, eventCode: 'AUTHORIZATION', originalReference: undefined }), /unknown eventCode/);
  });
});
