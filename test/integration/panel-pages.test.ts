// The seller panel's pages in a real browser (Debian's Chromium, JavaScript off), as a seller uses
// them (CONTRACT §12): a sale made by the API with its PIX QR, paid through the sandbox PSP; a
// refund and a cancel; a webhook with "Notificar saques", its test, the delivery log and a resend;
// a cashout reviewed, confirmed and followed; the statement and its CSV; keys issued and revoked;
// the password changed; another seller kept out. axe-core on every page; a screenshot of each.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import jsQRImport from 'jsqr';
import type { Browser, Page } from 'playwright-core';
import pngjs from 'pngjs';
import { createDeliveryJob } from '../../src/notifications/delivery.ts';
import { axeCheck, browserSkipReason, launchBrowser, newPage, screenshot } from '../helpers/browser.ts';
import { boletoExample, pixExample } from '../helpers/fixtures.ts';
import { adminHeaders, type Gateway, railJob, type SellerKeys, startGateway } from '../helpers/gateway.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

const jsQR = (typeof jsQRImport === 'function' ? jsQRImport : jsQRImport.default) as typeof jsQRImport.default;
const PASSWORD = 'senha-do-painel-longa';
const NEW_PASSWORD = 'outra-senha-bem-longa';
const EMAIL = 'vendas@example.com';

describe('the seller panel pages in a browser', { skip: browserSkipReason() }, () => {
  let gw: Gateway;
  let browser: Browser;
  let rx: Receiver;
  let base: string;
  let seller: SellerKeys;
  let page: Page;
  const delivery = createDeliveryJob({ retryDelaysMs: [60_000] });
  const state = { paidSale: 0, pixKey: '' };

  const api = async (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: object) =>
    gw.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  /** Delivers every due notification (the delivery worker, run by the test). */
  async function deliver(): Promise<void> {
    for (let i = 0; i < 20; i++) {
      const claimed = await delivery.run(gw.ctx);
      await delivery.settled();
      if (claimed === 0) return;
    }
    throw new Error('the delivery job never ran dry');
  }
  async function visit(path: string, shot?: string): Promise<void> {
    const answer = await page.goto(`${base}${path}`);
    assert.equal(answer?.status(), 200, `${path}: ${answer?.status()}`);
    assert.deepEqual(await axeCheck(page), [], `axe on ${path}`);
    if (shot) await screenshot(page, shot);
  }
  /** Waits (bounded) until the sale has no refund in flight: the sandbox PSP settles devoluções on its own. */
  async function settled(id: number): Promise<void> {
    for (let i = 0; i < 100; i++) {
      const refunds = (await api('GET', `/api/transactions/${id}/refunds`, seller.headers)).json().data as { status: string }[];
      if (refunds.every((r) => r.status !== 'PENDING')) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`a refund of sale ${id} stayed PENDING`);
  }
  const text = async (selector: string) => ((await page.locator(selector).first().textContent()) ?? '').trim();

  before(async () => {
    gw = await startGateway({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
    gw.ctx.providers.listeningAt(base);
    await railJob(gw, 'pix-reconcile').run(gw.ctx); // registers the PSP's callback to this gateway
    rx = await startReceiver();
    browser = await launchBrowser();
    seller = await gw.createSeller({ name: 'Loja das Vendas', email: EMAIL });
    const invite = await api('POST', `/admin/sellers/${seller.id}/panel-invites`, adminHeaders);
    page = await newPage(browser, { javaScriptEnabled: false });
    await page.goto(`${base}${new URL(invite.json().url).pathname}`);
    await page.getByLabel('Senha', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Repita a senha').fill(PASSWORD);
    await page.getByRole('button', { name: 'Criar senha e entrar' }).click();
    await page.waitForURL(`${base}/painel`);
  });
  after(async () => {
    await delivery.close();
    await browser?.close();
    await rx?.close();
    await gw?.close();
  });

  test('Integrações: add a webhook with "Notificar saques", send a test, see it delivered, resend it', async () => {
    await visit('/painel/integracoes');
    await page.getByLabel('URL').fill(rx.url('/saques'));
    await page.getByLabel('Transações').uncheck();
    await page.getByLabel('Notificar saques').check();
    await page.getByRole('button', { name: 'Adicionar webhook' }).click();
    await page.waitForURL(`${base}/painel/integracoes?feito=webhook`);
    assert.match(await text('[data-webhook]'), /\/saques.*Notificar saques/s);
    const listed = (await api('GET', '/api/webhooks', seller.headers)).json().data;
    assert.deepEqual(
      listed.map((w: { types: string[] }) => w.types),
      [['WITHDRAWAL']],
      'the API sees what the panel added',
    );

    await page.getByRole('button', { name: 'Enviar teste' }).click();
    await page.waitForURL(`${base}/painel/integracoes?feito=teste`);
    await deliver();
    const [first] = rx.requestsTo('/saques');
    assert.equal(first?.headers['x-test-event'], 'true');
    await visit('/painel/integracoes', 'painel-integracoes');
    assert.match(await text('[data-entrega]'), /Saque \(teste\).*Entregue \(1 tentativa, HTTP 200\)/s);

    await page.locator('[data-entrega] button', { hasText: 'Reenviar' }).first().click();
    await page.waitForURL(`${base}/painel/integracoes?feito=reenvio`);
    await deliver();
    const sent = rx.requestsTo('/saques');
    assert.equal(sent.length, 2);
    assert.equal(sent[1]!.headers['x-event-id'], first!.headers['x-event-id'], 'the same notification again');
    await page.reload();
    assert.match(await text('[data-entrega]'), /Entregue \(2 tentativas, HTTP 200\)/);
  });

  test('Vendas: a sale made by the API, its PIX QR readable; paid through the sandbox, the balance moves', async () => {
    const created = await api('POST', '/api/sales', seller.headers, pixExample());
    assert.equal(created.statusCode, 201, created.body);
    const { id, payment } = created.json().sale;
    state.paidSale = id;
    state.pixKey = payment.pix.key;

    await visit('/painel/vendas?status=PENDENTE&metodo=PIX', 'painel-vendas');
    assert.match(await text('tbody tr'), new RegExp(`#${id}.*Maria Silva.*PIX.*PENDENTE.*R\\$ 150,00`, 's'));
    await visit('/painel/vendas?status=PAGO');
    assert.equal(await page.locator('tbody tr').count(), 0, 'the filter keeps the pending sale out');

    await page.goto(`${base}/painel/vendas`);
    await page.getByRole('link', { name: `#${id}` }).click();
    await page.waitForURL(`${base}/painel/vendas/${id}`);
    assert.deepEqual(await axeCheck(page), [], 'a sale');
    await screenshot(page, 'painel-venda-pix');
    assert.equal(await page.locator('#copia').inputValue(), state.pixKey, 'copia e cola as the API gave it');
    // What a payer's camera would read: the QR as the browser drew it, decoded independently.
    const drawn = pngjs.PNG.sync.read(await page.locator('img.qr').screenshot());
    assert.equal(jsQR(new Uint8ClampedArray(drawn.data), drawn.width, drawn.height)?.data, state.pixKey);

    await visit('/painel');
    assert.equal(await text('[data-saldo="disponivel"]'), 'R$ 0,00');
    const txid = (await api('GET', `/api/transactions/${id}`, seller.headers)).json().externalTransactionId;
    const paid = await api('POST', `/sandbox/pix/${txid}/pay`, adminHeaders, {});
    assert.equal(paid.statusCode, 200, paid.body);
    await page.reload();
    assert.equal(await text('[data-saldo="disponivel"]'), 'R$ 147,02', 'R$ 150,00 less the PIX fee');
    await visit(`/painel/vendas/${id}`);
    assert.equal(await text('[data-venda="status"]'), 'PAGO');
    assert.match(await text('.historico'), /PENDENTE → PAGO/);
    assert.equal(await page.locator('img.qr').count(), 0, 'no QR once paid');
  });

  test("Vendas: a boleto sale's page shows its linha digitável, its Pix QR readable and the PDF", async () => {
    const created = await api('POST', '/api/sales', seller.headers, boletoExample());
    assert.equal(created.statusCode, 201, created.body);
    const { id, payment } = created.json().sale;
    await visit(`/painel/vendas/${id}`, 'painel-venda-boleto');
    assert.match(await text('main'), new RegExp(`Linha digitável:\\s*${payment.boleto.code}`));
    assert.equal(await page.locator('#copia').inputValue(), payment.boleto.pix.key, 'the boleto híbrido Pix, as the API gave it');
    const drawn = pngjs.PNG.sync.read(await page.locator('img.qr').screenshot());
    assert.equal(jsQR(new Uint8ClampedArray(drawn.data), drawn.width, drawn.height)?.data, payment.boleto.pix.key);
    const pdf = await page.getByRole('link', { name: 'Boleto em PDF' }).getAttribute('href');
    assert.equal(pdf, payment.boleto.pdfUrl);
    const fetched = await fetch(pdf!);
    assert.equal(fetched.status, 200);
    assert.equal(
      Buffer.from(await fetched.arrayBuffer())
        .subarray(0, 5)
        .toString(),
      '%PDF-',
      'the link opens a PDF',
    );
  });

  test('Vendas: a partial refund from the sale page; a pending sale cancelled', async () => {
    await visit(`/painel/vendas/${state.paidSale}`);
    await page.getByLabel(/Valor a estornar/).fill('50,00');
    await page.getByRole('button', { name: 'Estornar' }).click();
    await page.waitForURL(`${base}/painel/vendas/${state.paidSale}?feito=estorno`);
    assert.match(await text('[role="status"]'), /Estorno pedido/);
    assert.match(await text('section[aria-labelledby="estornos"] tbody'), /R\$ 50,00/);
    const refunds = (await api('GET', `/api/transactions/${state.paidSale}/refunds`, seller.headers)).json().data;
    assert.deepEqual(
      refunds.map((r: { amount: number }) => r.amount),
      [5000],
      'one refund, the API sees it',
    );
    // Once the PSP has made the devolução, more than is left: the API's refusal, in words, on the same page.
    await settled(state.paidSale);
    await page.reload();
    assert.match(await text('section[aria-labelledby="estornos"] tbody'), /Concluído/);
    await page.getByLabel(/Valor a estornar/).fill('500,00');
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Estornar' }).click(),
    ]);
    assert.equal(answer.status(), 422);
    assert.match(await text('[role="alert"]'), /passa do que ainda pode ser estornado/);

    // The refund form sent twice (a double click): the same order, one refund, both answered as done.
    await settled(state.paidSale);
    await page.reload();
    await page.getByLabel(/Valor a estornar/).fill('10,00');
    const form = Object.fromEntries(
      await page
        .locator(`form[action="/painel/vendas/${state.paidSale}/estorno"] input`)
        .evaluateAll((inputs) => inputs.map((i) => [(i as HTMLInputElement).name, (i as HTMLInputElement).value])),
    );
    for (let i = 0; i < 2; i++) {
      const posted = await page.context().request.post(`${base}/painel/vendas/${state.paidSale}/estorno`, { form, maxRedirects: 0 });
      assert.equal(posted.status(), 303, `send ${i + 1}`);
    }
    const after = (await api('GET', `/api/transactions/${state.paidSale}/refunds`, seller.headers)).json().data;
    assert.deepEqual(
      after.map((r: { amount: number }) => r.amount),
      [5000, 1000],
      'one refund for the order sent twice',
    );
    await settled(state.paidSale);

    const pending = (await api('POST', '/api/sales', seller.headers, pixExample({ amount: 2000 }))).json().sale.id;
    await visit(`/painel/vendas/${pending}`);
    await page.getByRole('button', { name: 'Cancelar venda' }).click();
    await page.waitForURL(`${base}/painel/vendas/${pending}?feito=cancelada`);
    assert.equal(await text('[data-venda="status"]'), 'CANCELADO');
    assert.equal((await api('GET', `/api/transactions/${pending}`, seller.headers)).json().status, 'CANCELADO');
  });

  test('Saques: fees and net shown before confirming; one cashout for a form sent twice; it moves, and the webhook says so', async () => {
    const more = (await api('POST', '/api/sales', seller.headers, pixExample({ amount: 20000 }))).json().sale.id;
    await api('POST', `/admin/transactions/${more}/events`, adminHeaders, { event: 'PAYMENT_CONFIRMED' });
    const before = (await api('GET', '/api/public/balance', seller.headers)).json().available as number;
    await visit('/painel/saques');
    await page.getByLabel('Valor (R$)').fill('99,99');
    await page.getByLabel('Chave PIX').fill('529.982.247-25');
    await page.getByRole('button', { name: 'Revisar saque' }).click();
    assert.match(await text('[role="alert"]'), /abaixo do mínimo/);
    assert.equal(await page.getByLabel('Chave PIX').inputValue(), '529.982.247-25', 'what was typed stays');

    await page.getByLabel('Valor (R$)').fill('100,00');
    await page.getByRole('button', { name: 'Revisar saque' }).click();
    assert.deepEqual(await axeCheck(page), [], 'the review page');
    await screenshot(page, 'painel-saque-revisar');
    assert.equal(await text('[data-saque="valor"]'), 'R$ 100,00');
    const fees = await text('[data-saque="tarifas"]');
    const net = await text('[data-saque="liquido"]');
    const cents = (s: string) => Number(s.replace(/\D/g, ''));
    assert.equal(cents(fees) + cents(net), 10000, `${fees} + ${net} = R$ 100,00`);
    assert.equal((await api('GET', '/api/public/balance', seller.headers)).json().available, before, 'nothing moved before confirming');

    // The confirmation posted twice (a double click, a reload): the same order, one cashout.
    const form = Object.fromEntries(
      await page
        .locator('form[action="/painel/saques"] input')
        .evaluateAll((inputs) => inputs.map((i) => [(i as HTMLInputElement).name, (i as HTMLInputElement).value])),
    );
    for (let i = 0; i < 2; i++) {
      const posted = await page.context().request.post(`${base}/painel/saques`, { form, maxRedirects: 0 });
      assert.equal(posted.status(), 303);
    }
    await visit('/painel/saques?feito=saque', 'painel-saques');
    assert.equal(await page.locator('tr[data-saque]').count(), 1, 'one cashout');
    const id = Number(await page.locator('tr[data-saque]').getAttribute('data-saque'));
    assert.equal(await text('[data-saque-status]'), 'Pendente');
    for (const [event, shown] of [
      ['PROCESSING', 'Em processamento'],
      ['COMPLETED', 'Concluído'],
    ] as const) {
      assert.equal((await api('POST', `/admin/cashouts/${id}/events`, adminHeaders, { event })).statusCode, 200);
      await page.reload();
      assert.equal(await text('[data-saque-status]'), shown);
    }
    await deliver();
    const statuses = rx
      .requestsTo('/saques')
      .slice(2)
      .map((r) => JSON.parse(r.body.toString()).status);
    assert.deepEqual(statuses, ['PROCESSING', 'COMPLETED'], 'the "Notificar saques" webhook told each move');
  });

  test('Extrato: the journal lines, and the whole of it as CSV', async () => {
    await visit('/painel/extrato', 'painel-extrato');
    assert.match(await text('tbody'), /Venda paga/);
    assert.match(await text('tbody'), /Saque pedido/);
    const csv = await page.context().request.get(`${base}/painel/extrato.csv`);
    assert.equal(csv.status(), 200);
    assert.match(csv.headers()['content-type'] ?? '', /^text\/csv/);
    assert.match(csv.headers()['content-disposition'] ?? '', /attachment; filename="extrato-\d{4}-\d{2}-\d{2}\.csv"/);
    const lines = (await csv.text())
      .replace(/^\ufeff/, '')
      .trim()
      .split('\r\n');
    assert.equal(lines[0], 'lancamento;data;conta;tipo;codigo;valor;venda;saque');
    const statement = (await api('GET', '/api/public/statement?limit=100', seller.headers)).json().data as { id: number; amount: number }[];
    assert.equal(lines.length - 1, statement.length, 'every journal line');
    const total = lines.slice(1).reduce((sum, l) => sum + Math.round(Number(l.split(';')[5]!.replace(',', '.')) * 100), 0);
    assert.equal(
      total,
      statement.reduce((sum, l) => sum + l.amount, 0),
      'the CSV adds up to the API statement',
    );
  });

  test('Chaves de API: a new key works at once and is shown once; revoked, the API refuses it', async () => {
    await visit('/painel/chaves');
    await page.getByRole('button', { name: 'Gerar nova chave' }).click();
    const publicKey = await text('[data-chave="publica"]');
    const privateKey = await text('[data-chave="privada"]');
    assert.deepEqual(await axeCheck(page), [], 'a new key');
    const headers = { 'x-api-public-key': publicKey, 'x-api-private-key': privateKey };
    assert.equal((await api('GET', '/api/public/balance', headers)).statusCode, 200);
    await visit('/painel/chaves', 'painel-chaves');
    assert.equal((await page.content()).includes(privateKey), false, 'never shown again');
    await page.getByRole('button', { name: `Revogar ${publicKey}` }).click();
    await page.waitForURL(`${base}/painel/chaves?feito=revogada`);
    assert.equal((await api('GET', '/api/public/balance', headers)).statusCode, 401);
    assert.equal((await api('GET', '/api/public/balance', seller.headers)).statusCode, 200, 'the other key still works');
  });

  test('Chaves de API: the signing secret of the notifications is shown on demand and can be rotated', async () => {
    await visit('/painel/chaves');
    const secret = page.locator('[data-segredo="atual"]');
    assert.equal(await secret.isVisible(), false, 'hidden until asked for');
    await page.getByText('Mostrar o segredo de assinatura').click();
    const shown = await text('[data-segredo="atual"]');
    assert.equal(shown, (await api('GET', '/api/signing-secret', seller.headers)).json().secret);
    // The same form sent twice (a double click, a reload) rotates once: the first new secret stays.
    const form = {
      csrf: await page.locator('input[name="csrf"]').first().inputValue(),
      pedido: await page.locator('form[action="/painel/chaves/segredo/trocar"] input[name="pedido"]').inputValue(),
    };
    const twice = await page.context().request.post(`${base}/painel/chaves/segredo/trocar`, { form, maxRedirects: 0 });
    assert.equal(twice.status(), 303);
    const afterFirst = (await api('GET', '/api/signing-secret', seller.headers)).json().secret;
    await page.getByRole('button', { name: 'Trocar o segredo' }).click();
    await page.waitForURL(`${base}/painel/chaves?feito=segredo`);
    assert.equal((await api('GET', '/api/signing-secret', seller.headers)).json().secret, afterFirst, 'one rotation for one form');
    assert.match(await text('main'), /Segredo trocado/);
    assert.match(await text('main'), /O segredo anterior também assina até/);
    const rotated = (await api('GET', '/api/signing-secret', seller.headers)).json();
    assert.notEqual(rotated.secret, shown);
    assert.notEqual(rotated.previousSecretExpiresAt, null);
    await page.getByText('Mostrar o segredo de assinatura').click();
    assert.equal(await text('[data-segredo="atual"]'), rotated.secret);
    assert.deepEqual(await axeCheck(page), [], 'the rotated secret');
  });

  test("another seller cannot open the first seller's sale by URL, nor refund it", async () => {
    const other = await gw.createSeller({ name: 'Outra Loja', email: 'outra-loja@example.com' });
    const invite = await api('POST', `/admin/sellers/${other.id}/panel-invites`, adminHeaders);
    const intruder = await newPage(browser, { javaScriptEnabled: false });
    await intruder.goto(`${base}${new URL(invite.json().url).pathname}`);
    await intruder.getByLabel('Senha', { exact: true }).fill(PASSWORD);
    await intruder.getByLabel('Repita a senha').fill(PASSWORD);
    await intruder.getByRole('button', { name: 'Criar senha e entrar' }).click();
    await intruder.waitForURL(`${base}/painel`);
    const answer = await intruder.goto(`${base}/painel/vendas/${state.paidSale}`);
    assert.equal(answer?.status(), 403);
    const html = await intruder.content();
    assert.equal(html.includes('Maria Silva') || html.includes('R$ 150,00'), false, 'nothing of the sale shown');
    const csrf = await intruder.locator('input[name="csrf"]').first().inputValue();
    const refund = await intruder
      .context()
      .request.post(`${base}/painel/vendas/${state.paidSale}/estorno`, { form: { csrf, valor: '' }, maxRedirects: 0 });
    assert.equal(refund.status(), 403);
    const webhookId = (await api('GET', '/api/webhooks', seller.headers)).json().data[0].id;
    const notificationId = (await api('GET', '/api/notifications', seller.headers)).json().data[0].id;
    const before = {
      refunds: (await api('GET', `/api/transactions/${state.paidSale}/refunds`, seller.headers)).json().data.length,
      notifications: (await api('GET', '/api/notifications?limit=100', seller.headers)).json().data.length,
    };
    for (const [path, status] of [
      [`/painel/vendas/${state.paidSale}/estorno`, 403],
      [`/painel/vendas/${state.paidSale}/cancelar`, 403],
      [`/painel/integracoes/${webhookId}/teste`, 403],
      [`/painel/integracoes/${webhookId}/remover`, 403],
      [`/painel/notificacoes/${notificationId}/reenviar`, 403],
      [`/painel/chaves/${seller.publicKey}/revogar`, 404],
    ] as const) {
      const posted = await intruder.context().request.post(`${base}${path}`, { form: { csrf, valor: '', pedido: 'x'.repeat(24) }, maxRedirects: 0 });
      assert.equal(posted.status(), status, path);
    }
    assert.equal((await api('GET', `/api/transactions/${state.paidSale}/refunds`, seller.headers)).json().data.length, before.refunds, 'no refund');
    assert.equal((await api('GET', `/api/transactions/${state.paidSale}`, seller.headers)).json().status, 'PAGO', 'not cancelled');
    assert.equal((await api('GET', '/api/webhooks', seller.headers)).json().data.length, 1, 'the webhook is still there');
    assert.equal((await api('GET', '/api/notifications?limit=100', seller.headers)).json().data.length, before.notifications, 'nothing sent');
    assert.equal((await api('GET', '/api/public/balance', seller.headers)).statusCode, 200, 'the key still works');
    assert.equal(await intruder.locator('tbody tr').count(), 0);
    await intruder.context().close();
  });

  test('a bad address or a bad id is a page in words with its status, never JSON or a stack', async () => {
    for (const [path, status] of [
      ['/painel/vendas/abc', 400],
      ['/painel/vendas/999999', 404],
      [`/painel/vendas?de=${'9'.repeat(40)}`, 400],
      ['/painel/nao-existe', 404],
    ] as const) {
      const answer = await page.goto(`${base}${path}`);
      assert.equal(answer?.status(), status, path);
      assert.match(answer?.headers()['content-type'] ?? '', /^text\/html/, path);
      assert.doesNotMatch(await page.content(), /at .*\.ts:\d+|errorType/, path);
    }
  });

  test('Conta: the password changes only with the current one; the new one logs in', async () => {
    await visit('/painel/conta', 'painel-conta');
    await page.getByLabel('Senha atual').fill('nao-e-a-senha-atual');
    await page.getByLabel(/^Nova senha/).fill(NEW_PASSWORD);
    await page.getByLabel('Repita a nova senha').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Trocar senha' }).click();
    assert.match(await text('[role="alert"]'), /senha atual está incorreta/);
    await page.getByLabel('Senha atual').fill(PASSWORD);
    await page.getByLabel(/^Nova senha/).fill(NEW_PASSWORD);
    await page.getByLabel('Repita a nova senha').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Trocar senha' }).click();
    await page.waitForURL(`${base}/painel/conta?feito=senha`);
    await page.getByRole('button', { name: 'Sair desta sessão' }).click();
    await page.waitForURL(`${base}/painel/entrar`);
    for (const [password, status] of [
      [PASSWORD, 401],
      [NEW_PASSWORD, 303],
    ] as const) {
      await page.goto(`${base}/painel/entrar`);
      await page.getByLabel('E-mail').fill(EMAIL);
      await page.getByLabel('Senha').fill(password);
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.getByRole('button', { name: 'Entrar' }).click(),
      ]);
      assert.equal(answer.status(), status);
    }
    await page.waitForURL(`${base}/painel`);
  });
});
