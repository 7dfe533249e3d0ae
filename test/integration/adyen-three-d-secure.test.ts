// 3-D Secure through Adyen's wire protocol (CONTRACT §11.2, issue 48): the gateway talks to the
// repository's Adyen double through the proxy that checks every request and answer against the
// vendored Checkout file (adyen-checkout-v71.json), and takes the AUTHORISATION notification signed
// as Adyen signs it. A debit sale leaves through the gateway's page to the issuer the double names,
// comes back with the issuer's redirectResult, and the gateway asks POST /payments/details once.
// PGlite by default; PostgreSQL when TEST_DATABASE_URL is set.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createDeliveryJob } from '../../src/notifications/delivery.ts';
import { expiryJob } from '../../src/transactions/jobs.ts';
import { ADYEN_3DS_GET_CARD, ADYEN_3DS_POST_CARD, type AdyenCall, type IssuerOutcome } from '../helpers/adyen-double.ts';
import { accepted, authorisation, type Json, type Rail, read, startRail, stopRail } from '../helpers/adyen-rail.ts';
import { authenticationExample, cardExample, debitExample } from '../helpers/fixtures.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { shopperReturns, tokenOf } from '../helpers/three-d-secure.ts';

const public_base = 'https://pagamentos.example.com';
const seller_return = 'https://loja.example.com/pedido/retorno?pedido=77';

/** The /payments body with the card's number and CVC masked: what a test may print. */
function redacted(body: unknown): Json {
  const copy = structuredClone(body) as Json;
  const method = copy.paymentMethod as Json | undefined;
  if (method && typeof method.number === 'string') method.number = `${'*'.repeat(method.number.length - 4)}${method.number.slice(-4)}`;
  if (method && 'cvc' in method) method.cvc = '***';
  return copy;
}

describe('3-D Secure through Adyen (redirect flow)', () => {
  let r: Rail;
  let rx: Receiver;
  let now = new Date('2026-11-20T12:00:00.000Z');
  const later = (ms: number) => {
    now = new Date(now.getTime() + ms);
  };
  const delivery = createDeliveryJob({ retryDelaysMs: [60_000], random: () => 0.5 });

  before(async () => {
    rx = await startReceiver();
    r = await startRail({ PUBLIC_BASE_URL: public_base, WEBHOOK_ALLOW_PRIVATE: 'true' }, { clock: { now: () => now } });
  });
  after(async () => {
    const violations = r ? [...r.proxy.violations] : [];
    await delivery.close();
    await stopRail(r);
    await rx?.close();
    assert.deepEqual(violations, [], 'every request and answer conforms to adyen-checkout-v71.json');
  });

  const sell = async (body: Json) => {
    const res = await r.gw.app.inject({ method: 'POST', url: '/api/sales', headers: r.seller.headers, payload: body });
    assert.equal(res.statusCode, 201, res.body);
    const sale = res.json().sale;
    assert.equal(sale.status, 'PENDENTE');
    return sale as { id: number; payment: { card: { authentication: { status: string; url: string; expiresAt: string } | null } } };
  };
  const debit = (number: string, extra: Json = {}) =>
    sell({
      ...debitExample(),
      card: { ...(debitExample().card as Json), number },
      authentication: authenticationExample(seller_return),
      ...extra,
    });
  const callsTo = (path: string, reference?: string) =>
    r.adyen.requests.filter((c) => c.path === path && (reference === undefined || (c.body as Json).reference === reference));
  const paymentCall = (id: number): AdyenCall => {
    const calls = callsTo('/payments', String(id));
    assert.equal(calls.length, 1, `one POST /payments for sale ${id}`);
    return calls[0]!;
  };
  const detailsCalls = (id: number) =>
    r.adyen.requests.filter((c) => c.path === '/payments/details' && c.headers['idempotency-key']?.endsWith(`-details-${id}`));
  const pspOfAnswer = (id: number) => (paymentCall(id).answer!.body as Json).pspReference as string;
  const get = (url: string) => r.gw.app.inject({ method: 'GET', url });
  const back = (id: number, status: string) => `https://loja.example.com/pedido/retorno?pedido=77&saleId=${id}&status=${status}`;
  /** A sale waiting for its shopper: its token and the pspReference of the RedirectShopper answer. */
  const waiting = async (number = ADYEN_3DS_GET_CARD, extra: Json = {}) => {
    const sale = await debit(number, extra);
    const auth = sale.payment.card.authentication;
    assert.ok(auth, 'the answer carries the page');
    assert.equal((paymentCall(sale.id).answer!.body as Json).resultCode, 'RedirectShopper');
    return { id: sale.id, token: tokenOf(auth.url), psp: pspOfAnswer(sale.id), auth };
  };
  const issuer = (psp: string, outcome: IssuerOutcome) => r.adyen.issuerReturn(psp, outcome);
  const postbacks = async () => {
    await delivery.run(r.gw.ctx);
    await delivery.settled();
    return rx.requestsTo('/postback').map((q) => JSON.parse(q.body.toString('utf8')) as Json);
  };

  test('a debit sale: the §11.2 request, RedirectShopper, GET to the issuer, an authorised return, one /payments/details, EM_PROCESSAMENTO, PAGO by AUTHORISATION, notified once', async () => {
    const sale = await debit(ADYEN_3DS_GET_CARD, { postbackUrl: rx.url('/postback') });
    const auth = sale.payment.card.authentication!;
    assert.equal(auth.status, 'REQUIRED');
    assert.match(auth.url, /^https:\/\/pagamentos\.example\.com\/checkout\/3ds\/[A-Za-z0-9_-]{32}$/);
    assert.equal(auth.expiresAt, new Date(now.getTime() + 15 * 60_000).toISOString());
    const token = tokenOf(auth.url);

    // Exactly what Adyen received (the card masked, so a failure prints no card data).
    const call = paymentCall(sale.id);
    assert.equal(call.headers['idempotency-key'], `${r.gw.ctx.installationId}-payment-${sale.id}`);
    const sent = call.body as Json;
    const card = sent.paymentMethod as Json;
    assert.ok(card.number === ADYEN_3DS_GET_CARD && card.cvc === '987', 'the card as the seller sent it');
    const browser = (authenticationExample() as { browser: Json }).browser;
    assert.deepEqual(redacted(sent), {
      amount: { currency: 'BRL', value: 4990 },
      merchantAccount: r.adyen.merchantAccount,
      reference: String(sale.id),
      paymentMethod: {
        type: 'scheme',
        number: '************1237',
        expiryMonth: '01',
        expiryYear: '2031',
        cvc: '***',
        holderName: 'ANA LIMA',
        fundingSource: 'debit',
      },
      returnUrl: `${public_base}/checkout/3ds/${token}/return`,
      shopperInteraction: 'Ecommerce',
      authenticationData: { attemptAuthentication: 'always', threeDSRequestData: { nativeThreeDS: 'disabled' } },
      shopperEmail: 'ana@example.com',
      shopperName: { firstName: 'Ana', lastName: 'Lima' },
      countryCode: 'BR',
      channel: 'Web',
      origin: public_base,
      browserInfo: browser,
      shopperIP: '203.0.113.7',
      telephoneNumber: '+551133334444',
      captureDelayHours: 0,
    });
    if (process.env.SHOW_ADYEN_REQUEST) console.log(`POST /payments as Adyen received it (card masked): ${JSON.stringify(redacted(sent), null, 2)}`);
    const answer = call.answer!.body as Json;
    assert.equal(answer.resultCode, 'RedirectShopper');
    const action = answer.action as { method: string; url: string };

    const waitingRead = await read(r, sale.id);
    assert.deepEqual([waitingRead.status, waitingRead.authenticated], ['PENDENTE', null]);

    // The shopper's page forwards to the issuer as Adyen's action says (GET: a 303).
    const page = await get(`/checkout/3ds/${token}`);
    assert.equal(page.statusCode, 303);
    assert.equal(page.headers.location, action.url);

    // Back from the issuer, as Adyen sends the shopper: GET returnUrl?redirectResult=…
    const redirectResult = issuer(answer.pspReference as string, 'authenticated');
    const returned = await get(`/checkout/3ds/${token}/return?redirectResult=${encodeURIComponent(redirectResult)}`);
    assert.equal(returned.statusCode, 303, returned.body);
    assert.equal(returned.headers.location, back(sale.id, 'EM_PROCESSAMENTO'));
    const details = detailsCalls(sale.id);
    assert.equal(details.length, 1, 'exactly one POST /payments/details');
    assert.equal(details[0]!.headers['idempotency-key'], `${r.gw.ctx.installationId}-details-${sale.id}`);
    assert.deepEqual(details[0]!.body, { details: { redirectResult } });
    assert.equal((details[0]!.answer!.body as Json).resultCode, 'Authorised');

    const processing = await read(r, sale.id);
    assert.deepEqual(
      [processing.status, processing.authenticated, processing.externalTransactionId],
      ['EM_PROCESSAMENTO', true, answer.pspReference],
    );

    await accepted(r, authorisation(sale.id, answer.pspReference as string, 4990));
    const paid = await read(r, sale.id);
    assert.deepEqual([paid.status, paid.authenticated], ['PAGO', true]);
    await accepted(r, authorisation(sale.id, answer.pspReference as string, 4990));
    const sentPostbacks = await postbacks();
    assert.deepEqual(
      sentPostbacks.filter((p) => p.status === 'PAGO').map((p) => p.id),
      [sale.id],
      'the sale notified once for PAGO',
    );

    // The token is dead: the page is 404; a second return (the issuer's form, say) only sends the shopper back.
    assert.equal((await get(`/checkout/3ds/${token}`)).statusCode, 404);
    const again = await shopperReturns(r.gw.app, token, redirectResult);
    assert.equal(again.statusCode, 303);
    assert.equal(again.headers.location, back(sale.id, 'PAGO'));
    assert.equal(detailsCalls(sale.id).length, 1, 'no second /payments/details');
    assert.equal((await read(r, sale.id)).status, 'PAGO');
  });

  test('a POST action: an auto-submitted form to the issuer with its data, "Continuar", CSP form-action = the issuer; the form return authorises', async () => {
    const { id, token, psp } = await waiting(ADYEN_3DS_POST_CARD);
    const action = (paymentCall(id).answer!.body as Json).action as { method: string; url: string; data: Record<string, string> };
    assert.equal(action.method, 'POST');
    const page = await get(`/checkout/3ds/${token}`);
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.body, new RegExp(`<form id="issuer" method="post" action="${action.url.replace(/[.?*+^$()[\]{}|\\]/g, '\\$&')}">`));
    for (const [name, value] of Object.entries(action.data)) {
      assert.ok(
        page.body.includes(`<input type="hidden" name="${name}" value="${value.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}">`),
        `hidden ${name}`,
      );
    }
    assert.match(page.body, /<button type="submit">Continuar<\/button>/);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    const formAction = csp.split('; ').find((d) => d.startsWith('form-action '));
    assert.ok(formAction?.split(' ').slice(1).includes(new URL(action.url).origin), `the form may go to the issuer: ${csp}`);
    assert.ok(!formAction?.includes("'self'") && !formAction?.includes('*'), csp);
    assert.ok(!page.body.includes('1234') && !page.body.includes('ANA LIMA') && !page.body.includes('E-book'), 'no card or seller data on the page');

    const returned = await shopperReturns(r.gw.app, token, issuer(psp, 'authenticated'));
    assert.equal(returned.statusCode, 303);
    assert.equal(returned.headers.location, back(id, 'EM_PROCESSAMENTO'));
    assert.equal(detailsCalls(id).length, 1);
    const t = await read(r, id);
    assert.deepEqual([t.status, t.authenticated], ['EM_PROCESSAMENTO', true]);
    await accepted(r, authorisation(id, psp, 4990));
    assert.equal((await read(r, id)).status, 'PAGO');
  });

  test('a refused authentication ends RECUSADO; an Error ends FALHA; neither authenticated', async () => {
    const refused = await waiting();
    const no = await shopperReturns(r.gw.app, refused.token, issuer(refused.psp, 'refused'));
    assert.equal(no.headers.location, back(refused.id, 'RECUSADO'));
    const failed = await waiting(ADYEN_3DS_POST_CARD);
    const error = await get(`/checkout/3ds/${failed.token}/return?redirectResult=${encodeURIComponent(issuer(failed.psp, 'error'))}`);
    assert.equal(error.headers.location, back(failed.id, 'FALHA'));
    for (const [id, status] of [
      [refused.id, 'RECUSADO'],
      [failed.id, 'FALHA'],
    ] as const) {
      const t = await read(r, id);
      assert.deepEqual([t.status, t.authenticated], [status, false]);
      assert.equal(detailsCalls(id).length, 1);
    }
  });

  test('abandoned: CANCELADO after 15 minutes by the expiry job (test clock); the link is dead, nothing asked of Adyen', async () => {
    const { id, token } = await waiting();
    later(14 * 60_000);
    await expiryJob.run(r.gw.ctx);
    assert.equal((await read(r, id)).status, 'PENDENTE');
    later(61_000);
    await expiryJob.run(r.gw.ctx);
    const t = await read(r, id);
    assert.deepEqual([t.status, t.authenticated], ['CANCELADO', false]);
    assert.equal((await get(`/checkout/3ds/${token}`)).statusCode, 404);
    assert.equal(detailsCalls(id).length, 0);
  });

  test('a debit sale without authentication is 400 naming it, and nothing reaches Adyen', async () => {
    const before = r.adyen.requests.length;
    const { authentication: _, ...body } = debitExample();
    const res = await r.gw.app.inject({ method: 'POST', url: '/api/sales', headers: r.seller.headers, payload: body });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(
      res.json().details.map((d: { field: string }) => d.field),
      ['authentication'],
    );
    assert.equal(r.adyen.requests.length, before, 'nothing sent to Adyen');
  });

  test('a credit sale without authentication is sent exactly as before: attemptAuthentication never, no browser, decided at once', async () => {
    const sale = await sell(cardExample(ADYEN_3DS_GET_CARD));
    assert.equal(sale.payment.card.authentication, null);
    const sent = paymentCall(sale.id).body as Json;
    assert.deepEqual(sent.authenticationData, { attemptAuthentication: 'never' });
    assert.equal(sent.returnUrl, 'https://gateway.invalid/adyen/return');
    for (const field of ['browserInfo', 'channel', 'origin', 'shopperIP']) assert.equal(sent[field], undefined, field);
    assert.deepEqual(Object.keys(sent).sort(), [
      'amount',
      'authenticationData',
      'captureDelayHours',
      'countryCode',
      'deliveryAddress',
      'installments',
      'merchantAccount',
      'paymentMethod',
      'reference',
      'returnUrl',
      'shopperEmail',
      'shopperInteraction',
      'shopperName',
    ]);
    const t = await read(r, sale.id);
    assert.deepEqual([t.status, t.authenticated], ['EM_PROCESSAMENTO', null]);
  });

  test('a credit sale with authentication: the issuer may ask (no "always"); authenticated, then paid', async () => {
    const sale = await sell({ ...cardExample(ADYEN_3DS_GET_CARD), authentication: authenticationExample(seller_return) });
    const sent = paymentCall(sale.id).body as Json;
    assert.deepEqual(sent.authenticationData, { threeDSRequestData: { nativeThreeDS: 'disabled' } });
    assert.equal(sent.channel, 'Web');
    const psp = pspOfAnswer(sale.id);
    const token = tokenOf(sale.payment.card.authentication!.url);
    assert.equal((await shopperReturns(r.gw.app, token, issuer(psp, 'authenticated'))).headers.location, back(sale.id, 'EM_PROCESSAMENTO'));
    await accepted(r, authorisation(sale.id, psp, 16000));
    const t = await read(r, sale.id);
    assert.deepEqual([t.status, t.authenticated], ['PAGO', true]);
  });

  test('a forged or replayed token is 404 and moves nothing', async () => {
    const { id, token, psp } = await waiting();
    const result = issuer(psp, 'authenticated');
    const forged = [`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, 'A'.repeat(32), 'short', `${'A'.repeat(31)}%2F`];
    for (const t of forged) {
      assert.equal((await get(`/checkout/3ds/${t}`)).statusCode, 404, t);
      assert.equal((await shopperReturns(r.gw.app, t, result)).statusCode, 404, t);
      assert.equal((await get(`/checkout/3ds/${t}/return?redirectResult=${encodeURIComponent(result)}`)).statusCode, 404, t);
    }
    assert.equal((await read(r, id)).status, 'PENDENTE');
    assert.equal(detailsCalls(id).length, 0, 'nothing sent to Adyen');
    // The real token still works, once; replayed afterwards, its page is gone.
    assert.equal((await shopperReturns(r.gw.app, token, result)).headers.location, back(id, 'EM_PROCESSAMENTO'));
    assert.equal((await get(`/checkout/3ds/${token}`)).statusCode, 404);
    assert.equal(detailsCalls(id).length, 1);
  });

  test('Adyen unreachable on the return: EM_PROCESSAMENTO, the AUTHORISATION notification decides; the details key is the same on each try', async () => {
    const { id, token, psp } = await waiting();
    r.adyen.failNext('details', 500, 2);
    const returned = await shopperReturns(r.gw.app, token, issuer(psp, 'authenticated'));
    assert.equal(returned.headers.location, back(id, 'EM_PROCESSAMENTO'));
    const tries = detailsCalls(id);
    assert.equal(tries.length, 2, 'asked again once, under the same key');
    assert.deepEqual(new Set(tries.map((c) => c.headers['idempotency-key'])), new Set([`${r.gw.ctx.installationId}-details-${id}`]));
    // A second return does not ask again: the notification tells the outcome.
    assert.equal((await shopperReturns(r.gw.app, token, 'anything')).headers.location, back(id, 'EM_PROCESSAMENTO'));
    assert.equal(detailsCalls(id).length, 2);
    await accepted(r, authorisation(id, psp, 4990, false));
    assert.equal((await read(r, id)).status, 'RECUSADO');
  });

  test('the AUTHORISATION notification before the return: PAGO; the return then only redirects, no /payments/details', async () => {
    const { id, token, psp } = await waiting();
    await accepted(r, authorisation(id, psp, 4990));
    assert.equal((await read(r, id)).status, 'PAGO');
    const returned = await get(`/checkout/3ds/${token}/return?redirectResult=${encodeURIComponent(issuer(psp, 'authenticated'))}`);
    assert.equal(returned.statusCode, 303);
    assert.equal(returned.headers.location, back(id, 'PAGO'));
    assert.equal(detailsCalls(id).length, 0);
    const t = await read(r, id);
    assert.deepEqual([t.status, t.authenticated], ['PAGO', true]);
  });
});
