// 3-D Secure with the sandbox card processor (CONTRACT §11.2): a debit sale waits for its shopper,
// whose browser goes through the gateway's page to the sandbox issuer and back to the seller.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cardAutopilotJob } from '../../src/providers/sandbox/autopilot.ts';
import { expiryJob } from '../../src/transactions/jobs.ts';
import { authenticationExample, debitExample, saleOf } from '../helpers/fixtures.ts';
import { type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';
import { shopperReturns, tokenOf } from '../helpers/three-d-secure.ts';

describe('3-D Secure through the sandbox issuer', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  let now = new Date('2026-11-20T12:00:00.000Z');
  const later = (ms: number) => {
    now = new Date(now.getTime() + ms);
  };
  const returnUrl = 'https://loja.example.com/pedido/retorno?pedido=77';

  before(async () => {
    gw = await startGateway({ clock: { now: () => now }, env: { PUBLIC_BASE_URL: 'https://pagamentos.example.com' } });
    seller = await gw.createSeller();
  });
  after(async () => gw?.close());

  const sell = async (body: Record<string, unknown>) => {
    const res = await gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: body });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().sale;
  };
  const debit = (cardNumber = '5555555555554444') =>
    sell({ ...debitExample(), card: { ...(debitExample().card as object), number: cardNumber }, authentication: authenticationExample(returnUrl) });
  const read = async (id: number) => (await gw.app.inject({ method: 'GET', url: `/api/transactions/${id}`, headers: seller.headers })).json();
  const get = (url: string) => gw.app.inject({ method: 'GET', url });
  /** The autopilot's steps, 300 ms apart. */
  const autopilot = async () => {
    for (let i = 0; i < 3; i++) {
      later(400);
      await cardAutopilotJob.run(gw.ctx);
    }
  };

  test('a debit sale without authentication is refused, naming the field; nothing is written', async () => {
    const { authentication: _, ...body } = debitExample();
    const res = await gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: body });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(
      res.json().details.map((d: { field: string }) => d.field),
      ['authentication'],
    );
    const bad = { ...debitExample(), authentication: { ...authenticationExample('http://loja.example.com/r'), ip: 'not-an-ip' } };
    const res2 = await gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: bad });
    assert.equal(res2.statusCode, 400);
    assert.deepEqual(
      res2
        .json()
        .details.map((d: { field: string }) => d.field)
        .sort(),
      ['authentication.ip', 'authentication.returnUrl'],
    );
    const written = await gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions WHERE seller_id = $1', [seller.id]);
    assert.equal(written.rows[0]?.n, 0);
  });

  test('authenticated: the page forwards to the issuer, the return sends the shopper back, the sale is then paid', async () => {
    const sale = await debit();
    const auth = sale.payment.card.authentication;
    assert.equal(auth.status, 'REQUIRED');
    assert.match(auth.url, /^https:\/\/pagamentos\.example\.com\/checkout\/3ds\/[A-Za-z0-9_-]{32}$/);
    assert.equal(auth.expiresAt, new Date(now.getTime() + 15 * 60_000).toISOString());
    const token = tokenOf(auth.url);

    // Waiting for the shopper: the autopilot leaves it alone.
    await autopilot();
    assert.equal((await read(sale.id)).status, 'PENDENTE');

    const page = await get(`/checkout/3ds/${token}`);
    assert.equal(page.statusCode, 303);
    assert.equal(page.headers.location, `https://pagamentos.example.com/sandbox/3ds/${token}`);
    const issuer = await get(`/sandbox/3ds/${token}`);
    assert.equal(issuer.statusCode, 200);
    assert.match(issuer.body, /Autenticar/);
    assert.match(issuer.body, /Recusar/);
    assert.match(String(issuer.headers['content-security-policy']), /default-src 'none'.*form-action 'self'/);
    assert.ok(!issuer.body.includes('5555'), 'no card data on the page');

    const back = await shopperReturns(gw.app, token, 'sandbox-authenticated');
    assert.equal(back.statusCode, 303);
    assert.equal(back.headers.location, `https://loja.example.com/pedido/retorno?pedido=77&saleId=${sale.id}&status=PENDENTE`);
    await autopilot();
    const paid = await read(sale.id);
    assert.equal(paid.status, 'PAGO');
    assert.equal(paid.authenticated, true);

    // The token is dead: the page is gone, a second return only sends the shopper back.
    assert.equal((await get(`/checkout/3ds/${token}`)).statusCode, 404);
    assert.equal((await get(`/sandbox/3ds/${token}`)).statusCode, 404);
    const again = await shopperReturns(gw.app, token, 'sandbox-refused');
    assert.equal(again.statusCode, 303);
    assert.equal(again.headers.location, `https://loja.example.com/pedido/retorno?pedido=77&saleId=${sale.id}&status=PAGO`);
    assert.equal((await read(sale.id)).status, 'PAGO');
  });

  test('refused by the shopper, or by the issuer for a card ending in 0002: RECUSADO, not authenticated', async () => {
    const refused = await debit();
    const back = await shopperReturns(gw.app, tokenOf(refused.payment.card.authentication.url), 'sandbox-refused');
    assert.equal(back.headers.location, `https://loja.example.com/pedido/retorno?pedido=77&saleId=${refused.id}&status=RECUSADO`);
    const failing = await debit('5555555555570002');
    const back2 = await shopperReturns(gw.app, tokenOf(failing.payment.card.authentication.url), 'sandbox-authenticated');
    assert.match(String(back2.headers.location), /status=RECUSADO$/);
    for (const id of [refused.id, failing.id]) {
      const t = await read(id);
      assert.deepEqual([t.status, t.authenticated], ['RECUSADO', false]);
    }
  });

  test('abandoned: CANCELADO after 15 minutes by the expiry job, and the link is dead', async () => {
    const sale = await debit();
    const token = tokenOf(sale.payment.card.authentication.url);
    later(14 * 60_000);
    await expiryJob.run(gw.ctx);
    assert.equal((await read(sale.id)).status, 'PENDENTE');
    later(61_000);
    await expiryJob.run(gw.ctx);
    const t = await read(sale.id);
    assert.deepEqual([t.status, t.authenticated], ['CANCELADO', false]);
    assert.equal((await get(`/checkout/3ds/${token}`)).statusCode, 404);
    const late = await shopperReturns(gw.app, token, 'sandbox-authenticated');
    assert.match(String(late.headers.location), /status=CANCELADO$/);
    assert.equal((await read(sale.id)).status, 'CANCELADO');
  });

  test('a forged or malformed token is 404 and moves nothing', async () => {
    for (const token of ['A'.repeat(32), 'short', `${'A'.repeat(31)}%2F`]) {
      assert.equal((await get(`/checkout/3ds/${token}`)).statusCode, 404, token);
      assert.equal((await shopperReturns(gw.app, token, 'sandbox-authenticated')).statusCode, 404, token);
    }
  });

  test('a credit sale without authentication is sent as before: no page, played by the autopilot', async () => {
    const sale = await sell(saleOf('CREDIT_CARD'));
    assert.deepEqual(sale.payment.card, { authentication: null });
    await autopilot();
    const t = await read(sale.id);
    assert.deepEqual([t.status, t.authenticated], ['PAGO', null]);
  });
});
