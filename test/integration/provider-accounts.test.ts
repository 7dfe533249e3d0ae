// Provider accounts (CONTRACT §11): a second card processor and a second PIX PSP account, each
// registered with one line, carry sales, refunds and read-backs of their own; what was made with an
// account goes on to that account after the rails point elsewhere; an account no longer configured
// fails with its reason and sends nothing anywhere.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { accountOf, strandedWork } from '../../src/providers/accounts.ts';
import { apiPixConnector } from '../../src/providers/api-pix/connector.ts';
import { applyProviderFact } from '../../src/providers/events/apply-fact.ts';
import type { PixPsp } from '../../src/providers/ports.ts';
import { boletoExample, cardExample, pixExample } from '../helpers/fixtures.ts';
import { fund } from '../helpers/funding.ts';
import { adminHeaders, type Gateway, railJob, type SellerKeys, startGateway } from '../helpers/gateway.ts';
import { type TestCardProcessor, testCardProcessor } from '../helpers/second-rail/card-processor.ts';
import { makeTestCerts, opensslAvailable } from '../helpers/tls-certs.ts';

describe('provider accounts: a second card processor and a second PIX PSP', () => {
  let gw: Gateway;
  /** Only its embedded PSP serves here: the second PSP account. */
  let other: Gateway;
  let seller: SellerKeys;
  let card: TestCardProcessor;
  let secondPix: PixPsp;

  before(async () => {
    gw = await startGateway();
    other = await startGateway();
    seller = await gw.createSeller();
    card = testCardProcessor('test-card:second');
    const psp = other.ctx.rails.psp!;
    const connection = { baseUrl: psp.apiUrl, tokenUrl: psp.tokenUrl, clientId: psp.clientId, clientSecret: psp.clientSecret };
    const settings = {
      installationId: gw.ctx.installationId,
      receiverKey: gw.config.pixReceiverKey,
      merchantName: 'LOJA',
      merchantCity: 'SAO PAULO',
    };
    secondPix = apiPixConnector(connection, settings, accountOf('api-pix', psp.apiUrl, psp.clientId));
  });
  after(async () => {
    await gw?.close();
    await other?.close();
  });

  const inject = (method: 'GET' | 'POST', url: string, payload?: object, headers = seller.headers) =>
    gw.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  const read = async (id: number) => (await inject('GET', `/api/transactions/${id}`)).json();
  const accountOfSale = async (id: number) =>
    (await gw.ctx.db.query<{ account: string }>('SELECT account FROM transactions WHERE id = $1', [id])).rows[0]!.account;
  const refund = async (id: number) => {
    const res = await inject('POST', `/api/transactions/${id}/refund`, {});
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };
  const paidBySandbox = async (body: object) => {
    const created = await inject('POST', '/api/sales', body);
    assert.equal(created.statusCode, 201, created.body);
    const id: number = created.json().sale.id;
    const events = (body as { paymentMethod: string }).paymentMethod === 'PIX' ? ['PAYMENT_CONFIRMED'] : ['SENT_TO_PROCESSOR', 'APPROVED'];
    for (const event of events) assert.equal((await inject('POST', `/admin/transactions/${id}/events`, { event }, adminHeaders)).statusCode, 200);
    return id;
  };

  test('a card sale through the second processor: authorised, captured once, read back PAGO, refunded there; the old sale stays with its own', async () => {
    const old = await paidBySandbox(cardExample());
    assert.equal(await accountOfSale(old), 'sandbox');
    gw.ctx.providers.add(card, { rail: ['CREDIT_CARD', 'DEBIT_CARD'] });

    const created = await inject('POST', '/api/sales', cardExample());
    assert.equal(created.statusCode, 201, created.body);
    const id: number = created.json().sale.id;
    assert.equal(await accountOfSale(id), 'test-card:second');
    assert.equal((await read(id)).status, 'EM_PROCESSAMENTO', "the processor's answer, applied as a fact");
    assert.deepEqual(card.calls, [`authorise ${id}`, `capture ${id}`], 'the capture it owes, asked once');
    const port = gw.ctx.providers.port('CARD', 'test-card:second');
    for (const fact of (await port.sync({ saleId: id, paymentId: `T${id}` }))!) await applyProviderFact(gw.ctx, fact);
    assert.equal((await read(id)).status, 'PAGO', 'read back: captured');

    const made = await refund(id);
    assert.equal(made.status, 'SUCCEEDED');
    assert.ok(card.calls.includes(`refund ${made.id}`));
    const oldRefund = await refund(old);
    assert.equal(oldRefund.status, 'SUCCEEDED', "the sandbox processor's own refund");
    assert.ok(!card.calls.includes(`refund ${oldRefund.id}`), 'never sent to the account configured now');
    assert.equal((await inject('GET', '/admin/ledger/verify', undefined, adminHeaders)).json().ok, true);
  });

  test('a PIX sale through the second PSP account: charged there, read back PAGO, refunded there; the old sale is refunded at its own PSP', async () => {
    const old = await inject('POST', '/api/sales', pixExample({ amount: 2000 }));
    const oldId: number = old.json().sale.id;
    const oldTxid: string = (await read(oldId)).externalTransactionId;
    const paidOld = await inject('POST', `/sandbox/pix/${oldTxid}/pay`, {}, adminHeaders);
    assert.equal(paidOld.statusCode, 200, paidOld.body);
    for (const fact of await gw.ctx.providers.rail('PIX').sync(paidOld.json().endToEndId)) await applyProviderFact(gw.ctx, fact);
    assert.equal((await read(oldId)).status, 'PAGO');

    gw.ctx.providers.add(secondPix, { rail: ['PIX'] });
    const created = await inject('POST', '/api/sales', pixExample({ amount: 3000 }));
    assert.equal(created.statusCode, 201, created.body);
    const id: number = created.json().sale.id;
    assert.equal(await accountOfSale(id), secondPix.account.id);
    const txid: string = (await read(id)).externalTransactionId;
    assert.equal((await other.ctx.rails.apiPix.client.getCob(txid)).status, 'ATIVA', 'the charge is at the second PSP');
    // Paid at the second PSP (whose callback is nobody's): the read-back of that account tells it.
    const pix = await other.ctx.rails.psp!.pay(txid, 3000);
    for (const fact of await gw.ctx.providers.port('PIX', secondPix.account.id).sync(pix.endToEndId)) await applyProviderFact(gw.ctx, fact);
    assert.equal((await read(id)).status, 'PAGO');

    const made = await refund(id);
    assert.equal(made.status, 'PENDING', 'a devolução at the second PSP');
    assert.equal((await other.ctx.rails.apiPix.client.getPix(pix.endToEndId)).devolucoes?.length, 1);
    const oldRefund = await refund(oldId);
    assert.equal(oldRefund.status, 'PENDING');
    const oldE2e: string = paidOld.json().endToEndId;
    assert.equal((await gw.ctx.rails.apiPix.client.getPix(oldE2e)).devolucoes?.length, 1, 'at the PSP that received it');
  });

  test('an account no longer configured: the refund FAILED with its reason, nothing sent anywhere', async () => {
    const id = await paidBySandbox(cardExample());
    await gw.ctx.db.query("UPDATE transactions SET account = 'adyen:gone' WHERE id = $1", [id]);
    const before = card.calls.length;
    const made = await refund(id);
    assert.deepEqual([made.status, made.failureReason], ['FAILED', 'account adyen:gone not configured']);
    assert.equal(card.calls.length, before, 'not sent to the account configured now');
    const sale = await read(id);
    assert.deepEqual([sale.status, sale.refundedAmount], ['PAGO', 0], 'nothing refunded, the cents given back');
    assert.equal((await inject('GET', '/admin/ledger/verify', undefined, adminHeaders)).json().ok, true);
  });

  test('a cashout under way on an account no longer configured is found at start as stranded work, and no job sends it', async () => {
    await fund(gw, seller.id, 50_000);
    const cashout = await inject('POST', '/api/public/cashout', { amount: 150, pixKey: '52998224725', pixKeyType: 'CPF' });
    assert.equal(cashout.statusCode, 201, cashout.body);
    await gw.ctx.db.query("UPDATE cashouts SET account = 'efi:gone' WHERE id = $1", [cashout.json().id]);
    const registered = (['PIX', 'CARD', 'BOLETO', 'PAYOUT'] as const).flatMap((c) => gw.ctx.providers.all(c).map((p) => p.account.id));
    assert.deepEqual(await strandedWork(gw.ctx.db, registered), [{ account: 'efi:gone', what: 'cashouts under way', count: 1 }]);
    await railJob(gw, 'efi-payouts').run(gw.ctx);
    const row = await gw.ctx.db.query<{ status: string }>('SELECT status FROM cashouts WHERE id = $1', [cashout.json().id]);
    assert.equal(row.rows[0]!.status, 'PENDING', 'not sent by the payout job of the account configured now');
    const sent = await gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM sandbox_psp.sent WHERE info_pagador = $1', [
      `Saque ${cashout.json().id}`,
    ]);
    assert.equal(sent.rows[0]!.n, 0);
  });
});

// CONTRACT §11.1: each sandbox route answers only while the rail it plays is the sandbox's. Here
// PIX is a real PSP (another gateway's embedded one, reached as any PSP would be) and boletos are
// the sandbox's: the PIX levers are refused and make no Pix anywhere; the boleto lever works.
describe('sandbox routes with PIX real and boletos sandbox', { skip: !opensslAvailable() && 'no openssl for the client certificate' }, () => {
  let psp: Gateway;
  let gw: Gateway;
  before(async () => {
    psp = await startGateway();
    const rail = psp.ctx.rails.psp!;
    const certs = makeTestCerts();
    const dir = mkdtempSync(join(tmpdir(), 'pix-real-'));
    writeFileSync(join(dir, 'cert.pem'), certs.clientCert);
    writeFileSync(join(dir, 'key.pem'), certs.clientKey);
    gw = await startGateway({
      env: {
        PIX_PROVIDER: 'api-pix',
        PIX_API_BASE_URL: rail.apiUrl,
        PIX_API_TOKEN_URL: rail.tokenUrl,
        PIX_API_CLIENT_ID: rail.clientId,
        PIX_API_CLIENT_SECRET: rail.clientSecret,
        PIX_API_CERT_FILE: join(dir, 'cert.pem'),
        PIX_API_KEY_FILE: join(dir, 'key.pem'),
        PIX_WEBHOOK_BASE_URL: 'http://127.0.0.1:9',
      },
    });
  });
  after(async () => {
    await gw?.close();
    await psp?.close();
  });

  test('the PIX levers are 404 and make no Pix; the boleto lever pays', async () => {
    const seller = await gw.createSeller();
    const sale = await gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: pixExample() });
    assert.equal(sale.statusCode, 201, sale.body);
    const id: number = sale.json().sale.id;
    const txid: string = sale.json().sale.payment.pix.txid;
    const byTxid = await gw.app.inject({ method: 'POST', url: `/sandbox/pix/${txid}/pay`, headers: adminHeaders, payload: {} });
    const byId = await gw.app.inject({ method: 'POST', url: `/sandbox/sales/${id}/pay`, headers: adminHeaders, payload: {} });
    assert.deepEqual([byTxid.statusCode, byId.statusCode], [404, 404]);
    const received = await psp.ctx.rails.apiPix.client.listPix({ inicio: new Date(Date.now() - 3600_000), fim: new Date(Date.now() + 60_000) });
    assert.deepEqual(received.pix, [], 'no Pix at the PSP');
    const sandboxPix = await gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM sandbox_psp.pix');
    assert.equal(sandboxPix.rows[0]!.n, 0, "none at this gateway's own embedded PSP (its boletos') either");

    const boleto = await gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: boletoExample() });
    assert.equal(boleto.statusCode, 201, boleto.body);
    const paid = await gw.app.inject({ method: 'POST', url: `/sandbox/sales/${boleto.json().sale.id}/pay`, headers: adminHeaders, payload: {} });
    assert.equal(paid.statusCode, 200, paid.body);
  });
});
