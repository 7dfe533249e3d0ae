// The seller panel's pages in a real browser (Debian's Chromium, JavaScript off), as a seller uses
// them (CONTRACT §12): a sale made by the API with its PIX QR, paid through the sandbox PSP; a
// refund and a cancel; a webhook with "Notificar saques", its test, the delivery log and a resend;
// a cashout reviewed, confirmed and followed; the statement and its CSV; keys issued and revoked;
// the password changed; another seller kept out. axe-core on every page (panel-sizes.test.ts visits
// each at a phone's and a desk's size, and takes the README's screenshots).
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import jsQRImport from 'jsqr';
import type { Browser, Page } from 'playwright-core';
import pngjs from 'pngjs';
import { formatDigitableLine } from '../../src/domain/boleto.ts';
import { createDeliveryJob } from '../../src/notifications/delivery.ts';
import { axeCheck, browserSkipReason, launchBrowser, newPage } from '../helpers/browser.ts';
import { boletoExample, cardExample, debitExample, pixExample } from '../helpers/fixtures.ts';
import { adminHeaders, type Gateway, railJob, type SellerKeys, startGateway } from '../helpers/gateway.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { authenticateInSandbox, shopperReturns, tokenOf } from '../helpers/three-d-secure.ts';

const jsQR = (typeof jsQRImport === 'function' ? jsQRImport : jsQRImport.default) as typeof jsQRImport.default;
const PASSWORD = 'senha-do-painel-longa';
const NEW_PASSWORD = 'outra-senha-bem-longa';
const EMAIL = 'vendas@example.com';

/** "R$ 1.234,56", "-R$ 2,98" or "—" (nothing moved) as signed cents. */
function centsOf(shown: string): number {
  if (shown === '—') return 0;
  const cents = Number(shown.replace(/\D/g, ''));
  return shown.trim().startsWith('-') ? -cents : cents;
}

describe('the seller panel pages in a browser', { skip: browserSkipReason() }, () => {
  let gw: Gateway;
  let browser: Browser;
  let rx: Receiver;
  let base: string;
  let seller: SellerKeys;
  let page: Page;
  const delivery = createDeliveryJob({ retryDelaysMs: [60_000] });
  const state = { paidSale: 0, pixKey: '', cashout: 0 };

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
  async function visit(path: string): Promise<void> {
    const answer = await page.goto(`${base}${path}`);
    assert.equal(answer?.status(), 200, `${path}: ${answer?.status()}`);
    assert.deepEqual(await axeCheck(page), [], `axe on ${path}`);
  }
  /** The error shown beside an input: the input is marked invalid and described by it. */
  async function errorBeside(id: string): Promise<string> {
    const input = page.locator(`#${id}`);
    assert.equal(await input.getAttribute('aria-invalid'), 'true', `#${id} marked invalid`);
    assert.equal(await input.getAttribute('aria-describedby'), `${id}-erro`, `#${id} described by its error`);
    assert.equal(await page.locator('[role="alert"]').count(), 0, 'no error above the page instead');
    return text(`#${id}-erro`);
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
    await gw.ctx.providers.listeningAt(base);
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
    await visit('/painel/integracoes');
    assert.match(await text('[data-entrega]'), /Webhook de saque \(teste\).*Concluído.*Entregue \(1 tentativa, HTTP 200\)/s);

    await page.locator('[data-entrega] button', { hasText: 'Reenviar' }).first().click();
    await page.waitForURL(`${base}/painel/integracoes?feito=reenvio`);
    await deliver();
    const sent = rx.requestsTo('/saques');
    assert.equal(sent.length, 2);
    assert.equal(sent[1]!.headers['x-event-id'], first!.headers['x-event-id'], 'the same notification again');
    await page.reload();
    assert.match(await text('[data-entrega]'), /Entregue \(2 tentativas, HTTP 200\)/);
  });

  test('Integrações: a refused URL is said beside it; removing a webhook asks first, cancelling keeps it', async () => {
    await visit('/painel/integracoes');
    await page.getByLabel('URL').fill('ftp://loja.example/webhooks');
    await page.getByRole('button', { name: 'Adicionar webhook' }).click();
    assert.match(await errorBeside('url'), /must be an http or https URL/);
    assert.deepEqual(await axeCheck(page), [], 'the error beside the URL');
    await page.getByLabel('URL').fill(rx.url('/outro'));
    await page.getByLabel('Transações').uncheck();
    await page.getByRole('button', { name: 'Adicionar webhook' }).click();
    assert.equal(await page.getByLabel('Transações').getAttribute('aria-describedby'), 'tipos-erro');
    assert.match(await text('#tipos-erro'), /Marque ao menos um/);
    await page.getByLabel('Transações').check();
    await page.getByRole('button', { name: 'Adicionar webhook' }).click();
    await page.waitForURL(`${base}/painel/integracoes?feito=webhook`);
    const hooks = async () => ((await api('GET', '/api/webhooks', seller.headers)).json().data as { url: string }[]).map((w) => w.url);
    assert.deepEqual(await hooks(), [rx.url('/saques'), rx.url('/outro')]);

    const remove = page.getByRole('link', { name: `Remover ${rx.url('/outro')}` });
    assert.match((await remove.getAttribute('class')) ?? '', /perigo/, 'styled as a destructive action');
    await remove.click();
    await page.waitForURL(/\/painel\/integracoes\/\d+\/remover$/);
    assert.equal(await text('h1'), 'Remover este webhook?');
    assert.match(await text('main'), new RegExp(`${rx.url('/outro').replace(/[.]/g, '\\.')}.*Transações`, 's'));
    assert.match(await text('[data-confirmar="consequencias"]'), /deixa de receber as notificações/);
    assert.deepEqual(await axeCheck(page), [], 'the confirmation page');
    await page.getByRole('link', { name: 'Cancelar e manter o webhook' }).click();
    await page.waitForURL(`${base}/painel/integracoes`);
    assert.deepEqual(await hooks(), [rx.url('/saques'), rx.url('/outro')], 'cancelled: nothing removed');
    await remove.click();
    await page.getByRole('button', { name: 'Remover webhook' }).click();
    await page.waitForURL(`${base}/painel/integracoes?feito=removido`);
    assert.deepEqual(await hooks(), [rx.url('/saques')], 'removed once confirmed');
  });

  test('Vendas: a sale made by the API, its PIX QR readable; paid through the sandbox, the balance moves', async () => {
    const created = await api('POST', '/api/sales', seller.headers, pixExample());
    assert.equal(created.statusCode, 201, created.body);
    const { id, payment } = created.json().sale;
    state.paidSale = id;
    state.pixKey = payment.pix.key;

    await visit('/painel/vendas?status=PENDENTE&metodo=PIX');
    assert.match(await text('tbody tr'), new RegExp(`#${id}.*R\\$ 150,00.*Pendente.*PIX.*Maria Silva`, 's'));
    assert.equal(await page.locator('#status option:checked').textContent(), 'Pendente', 'the filter shows the word, keeps the code');
    assert.equal(await page.locator('#status').inputValue(), 'PENDENTE');
    await visit('/painel/vendas?status=PAGO');
    assert.equal(await page.locator('tbody tr').count(), 0, 'the filter keeps the pending sale out');

    await page.goto(`${base}/painel/vendas`);
    await page.getByRole('link', { name: `#${id}` }).click();
    await page.waitForURL(`${base}/painel/vendas/${id}`);
    assert.deepEqual(await axeCheck(page), [], 'a sale');
    assert.equal(await text('[data-venda="documento"]'), '529.982.247-25', "the customer's CPF, punctuated");
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
    assert.equal(await text('[data-venda="status"]'), 'Pago');
    assert.match(await text('.historico'), /Pendente → Pago \(pagamento confirmado\)/);
    assert.equal(await page.locator('img.qr').count(), 0, 'no QR once paid');
  });

  test("Vendas: a boleto sale's page shows its linha digitável, its Pix QR readable and the PDF", async () => {
    const created = await api('POST', '/api/sales', seller.headers, boletoExample());
    assert.equal(created.statusCode, 201, created.body);
    const { id, payment } = created.json().sale;
    await visit(`/painel/vendas/${id}`);
    assert.equal(await text('[data-venda="documento"]'), '11.222.333/0001-81', "the customer's CNPJ, punctuated");
    // Grouped as banks print it: 5.5 5.6 5.6 1 14.
    const digits = String(payment.boleto.code).replace(/\D/g, '');
    assert.equal(await text('[data-venda="linha-digitavel"]'), formatDigitableLine(digits));
    assert.match(await text('[data-venda="linha-digitavel"]'), /^\d{5}\.\d{5} \d{5}\.\d{6} \d{5}\.\d{6} \d \d{14}$/);
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
    assert.match(await errorBeside('valor'), /passa do que ainda pode ser estornado/);
    assert.deepEqual(await axeCheck(page), [], 'the error beside the field');

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
    assert.equal(await text('[data-venda="status"]'), 'Cancelado');
    assert.equal((await api('GET', `/api/transactions/${pending}`, seller.headers)).json().status, 'CANCELADO');
  });

  test("Vendas: a debit sale waiting for its shopper's 3-D Secure says so; once answered, its page tells whether the shopper was authenticated", async () => {
    const sell = async (body: object) => {
      const created = await api('POST', '/api/sales', seller.headers, body);
      assert.equal(created.statusCode, 201, created.body);
      return created.json().sale;
    };
    const waiting = await sell(debitExample());
    const authenticated = await sell(debitExample());
    const refused = await sell(debitExample());
    const credit = (await sell(cardExample())).id;
    const row = async (id: number) => text(`tbody tr:has(a[href="/painel/vendas/${id}"])`);

    await visit('/painel/vendas');
    for (const sale of [waiting, authenticated, refused])
      assert.match(await row(sale.id), /Aguardando autenticação.*Cartão de débito/s, `sale ${sale.id} in the list`);
    await visit('/painel');
    assert.match(await row(waiting.id), /Aguardando autenticação/, 'Início says the same word');
    await visit(`/painel/vendas/${waiting.id}`);
    assert.equal(await text('[data-venda="status"]'), 'Aguardando autenticação');
    assert.equal(await page.locator('[data-venda="autenticacao"]').count(), 0, 'nothing answered yet');

    await authenticateInSandbox(gw.app, authenticated);
    const back = await shopperReturns(gw.app, tokenOf(refused.payment.card.authentication.url), 'sandbox-refused');
    assert.equal(back.statusCode, 303, back.body);
    await visit('/painel/vendas');
    assert.match(await row(waiting.id), /Aguardando autenticação/);
    assert.match(await row(authenticated.id), /Pendente.*Cartão de débito/s, 'authenticated: pending as any card sale the processor has');
    assert.match(await row(refused.id), /Recusado.*Cartão de débito/s);
    await visit(`/painel/vendas/${authenticated.id}`);
    assert.equal(await text('[data-venda="status"]'), 'Pendente');
    assert.equal(await text('[data-venda="autenticacao"]'), 'Autenticado com 3-D Secure');
    for (const event of ['SENT_TO_PROCESSOR', 'APPROVED']) {
      const moved = await api('POST', `/admin/transactions/${authenticated.id}/events`, adminHeaders, { event });
      assert.equal(moved.statusCode, 200, moved.body);
    }
    await visit(`/painel/vendas/${authenticated.id}`);
    assert.equal(await text('[data-venda="status"]'), 'Pago');
    assert.equal(await text('[data-venda="autenticacao"]'), 'Autenticado com 3-D Secure', 'a paid sale still says it');
    await visit(`/painel/vendas/${refused.id}`);
    assert.equal(await text('[data-venda="status"]'), 'Recusado');
    assert.equal(await text('[data-venda="autenticacao"]'), 'Autenticação recusada ou abandonada');
    await visit(`/painel/vendas/${credit}`);
    assert.equal(await text('[data-venda="status"]'), 'Pendente', 'a credit sale sent without authentication');
    assert.equal(await page.locator('[data-venda="autenticacao"]').count(), 0, 'none was asked: nothing said');
  });

  test('Saques: fees and net shown before confirming; one cashout for a form sent twice; it moves, and the webhook says so', async () => {
    const more = (await api('POST', '/api/sales', seller.headers, pixExample({ amount: 20000 }))).json().sale.id;
    await api('POST', `/admin/transactions/${more}/events`, adminHeaders, { event: 'PAYMENT_CONFIRMED' });
    const before = (await api('GET', '/api/public/balance', seller.headers)).json().available as number;
    await visit('/painel/saques');
    await page.getByLabel('Valor (R$)').fill('99,99');
    await page.getByLabel('Chave PIX').fill('529.982.247-25');
    await page.getByRole('button', { name: 'Revisar saque' }).click();
    assert.match(await errorBeside('valor'), /abaixo do mínimo/);
    assert.equal(await page.locator('#chave').getAttribute('aria-invalid'), null, 'the key is not at fault');
    assert.equal(await page.getByLabel('Chave PIX').inputValue(), '529.982.247-25', 'what was typed stays');
    await page.getByLabel('Valor (R$)').fill('100,00');
    await page.getByLabel('Chave PIX').fill('529.982.247-24');
    await page.getByRole('button', { name: 'Revisar saque' }).click();
    assert.match(await errorBeside('chave'), /chave PIX não é válida/);
    assert.equal(await page.locator('#valor').getAttribute('aria-invalid'), null, 'the amount is not at fault');
    assert.deepEqual(await axeCheck(page), [], 'errors beside the fields');
    await page.getByLabel('Chave PIX').fill('52998224725');

    await page.getByLabel('Valor (R$)').fill('100,00');
    await page.getByRole('button', { name: 'Revisar saque' }).click();
    assert.deepEqual(await axeCheck(page), [], 'the review page');
    assert.equal(await text('[data-saque="chave"]'), 'CPF: 529.982.247-25', 'the key as people write it');
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
    await visit('/painel/saques?feito=saque');
    assert.equal(await text('[data-saque-chave]'), 'CPF: 529.982.247-25');
    assert.equal(await page.locator('tr[data-saque]').count(), 1, 'one cashout');
    const id = Number(await page.locator('tr[data-saque]').getAttribute('data-saque'));
    state.cashout = id;
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

  test('Extrato: each line with the available balance after it, a paid sale and its fee on lines of their own; the CSV says the same', async () => {
    await visit('/painel/extrato');
    const rows = await page.locator('table.extrato tbody tr').evaluateAll((trs) =>
      trs.map((tr) => ({
        text: (tr.querySelector('[data-extrato="lancamento"]')?.textContent ?? '').trim(),
        detail: (tr.querySelector('[data-extrato="detalhe"]')?.textContent ?? '').trim(),
        origin: (tr.querySelector('td.origem')?.textContent ?? '').trim(),
        amount: (tr.querySelector('[data-extrato="valor"]')?.textContent ?? '').trim(),
        balance: (tr.querySelector('[data-extrato="saldo"]')?.textContent ?? '').trim(),
      })),
    );
    const available = (await api('GET', '/api/public/balance', seller.headers)).json().available as number;
    assert.equal(centsOf(rows[0]!.balance), available, "the newest line's balance is the API's available balance");
    rows.forEach((row, i) => {
      const before = i + 1 < rows.length ? centsOf(rows[i + 1]!.balance) : 0;
      assert.equal(centsOf(row.balance), before + centsOf(row.amount), `line ${i + 1} (${row.text}): the balance before it plus its amount`);
    });

    const sale = (await api('GET', `/api/transactions/${state.paidSale}`, seller.headers)).json();
    assert.ok(sale.systemFee > 0, 'the paid sale was charged a fee');
    const ofSale = rows.filter((r) => r.origin === `Venda #${state.paidSale}` && /^(Venda paga|Tarifa da venda)/.test(r.text));
    assert.deepEqual(
      ofSale.map((r) => [r.text, centsOf(r.amount)]),
      [
        ['Tarifa da venda', -sale.systemFee],
        ['Venda paga', sale.amount],
      ],
      'the sale, then its fee on a line of its own (newest first)',
    );

    const cashout = (await api('GET', `/api/public/cashout/${state.cashout}`, seller.headers)).json();
    const ofCashout = rows.filter((r) => r.origin === `Saque #${state.cashout}`);
    assert.deepEqual(
      ofCashout.map((r) => [r.text, r.amount]),
      [
        ['Saque concluído', '—'],
        ['Saque pedido', `-R$ ${cashout.amount.replace('.', ',')}`],
      ],
      'a cashout: the amount leaves the available balance once, when it is asked for',
    );
    const paidOut = `R$ ${cashout.netAmount.replace('.', ',')} enviados por PIX e R$ ${cashout.fees.total.replace('.', ',')} de tarifa`;
    assert.ok(ofCashout[0]!.detail.startsWith(paidOut), `what the cashout paid out, in words: ${ofCashout[0]!.detail}`);

    const csv = await page.context().request.get(`${base}/painel/extrato.csv`);
    assert.equal(csv.status(), 200);
    assert.match(csv.headers()['content-type'] ?? '', /^text\/csv/);
    assert.match(csv.headers()['content-disposition'] ?? '', /attachment; filename="extrato-\d{4}-\d{2}-\d{2}\.csv"/);
    const lines = (await csv.text())
      .replace(/^\ufeff/, '')
      .trim()
      .split('\r\n');
    assert.equal(lines[0], 'lancamento;data;descricao;detalhe;venda;saque;valor;saldo_disponivel');
    const cells = lines.slice(1).map((l) => l.split(';'));
    const csvCents = (s: string) => Math.round(Number(s.replace(',', '.')) * 100);
    assert.deepEqual(
      cells.map((c) => [c[2], csvCents(c[6]!), csvCents(c[7]!)]),
      rows.map((r) => [r.text, centsOf(r.amount), centsOf(r.balance)]),
      'the CSV has the lines of the page, with the same amounts and balances',
    );
    const statement = (await api('GET', '/api/public/statement?limit=100', seller.headers)).json().data as { bucket: string; amount: number }[];
    assert.ok(statement.length < 100, 'the whole journal fits one API page');
    assert.equal(
      cells.reduce((sum, c) => sum + csvCents(c[6]!), 0),
      statement.filter((l) => l.bucket === 'available').reduce((sum, l) => sum + l.amount, 0),
      "the CSV's amounts add up to the API statement's available lines",
    );
  });

  test('Chaves de API: a new key works at once and is shown once; revoking asks first, cancelling keeps it; revoked, the API refuses it', async () => {
    await visit('/painel/chaves');
    await page.getByRole('button', { name: 'Gerar nova chave' }).click();
    const publicKey = await text('[data-chave="publica"]');
    const privateKey = await text('[data-chave="privada"]');
    assert.deepEqual(await axeCheck(page), [], 'a new key');
    const headers = { 'x-api-public-key': publicKey, 'x-api-private-key': privateKey };
    assert.equal((await api('GET', '/api/public/balance', headers)).statusCode, 200);
    await visit('/painel/chaves');
    assert.equal((await page.content()).includes(privateKey), false, 'never shown again');

    // A post that skips the confirmation page (an old page's form) is sent to it, and revokes nothing.
    const csrf = await page.locator('input[name="csrf"]').first().inputValue();
    const skipped = await page.context().request.post(`${base}/painel/chaves/${publicKey}/revogar`, { form: { csrf }, maxRedirects: 0 });
    assert.equal(skipped.status(), 303);
    assert.equal(skipped.headers().location, `/painel/chaves/${publicKey}/revogar`);
    assert.equal((await api('GET', '/api/public/balance', headers)).statusCode, 200, 'not revoked without confirming');

    await page.getByRole('link', { name: `Revogar ${publicKey}` }).click();
    await page.waitForURL(`${base}/painel/chaves/${publicKey}/revogar`);
    assert.equal(await text('h1'), 'Revogar esta chave?');
    assert.match(await text('[data-confirmar="consequencias"]'), /deixa de ser aceito pela API na hora\. A outra chave ativa continua valendo/);
    assert.match((await page.getByRole('button', { name: 'Revogar chave' }).getAttribute('class')) ?? '', /\bperigo\b/, 'a danger button');
    assert.deepEqual(await axeCheck(page), [], 'the confirmation page');
    await page.getByRole('link', { name: 'Cancelar e manter a chave' }).click();
    await page.waitForURL(`${base}/painel/chaves`);
    assert.equal((await api('GET', '/api/public/balance', headers)).statusCode, 200, 'cancelled: the key still works');

    await page.getByRole('link', { name: `Revogar ${publicKey}` }).click();
    await page.getByRole('button', { name: 'Revogar chave' }).click();
    await page.waitForURL(`${base}/painel/chaves?feito=revogada`);
    assert.equal((await api('GET', '/api/public/balance', headers)).statusCode, 401);
    assert.equal((await api('GET', '/api/public/balance', seller.headers)).statusCode, 200, 'the other key still works');
    assert.equal((await page.goto(`${base}/painel/chaves/${publicKey}/revogar`))?.status(), 404, 'a revoked key has no confirmation page');

    // The only active key left: its page says that revoking it stops every integration at once.
    await page.goto(`${base}/painel/chaves/${seller.publicKey}/revogar`);
    assert.match(await text('[data-confirmar="consequencias"]'), /única chave ativa.*para de funcionar na hora/s);
  });

  test('Chaves de API: the signing secret of the notifications is shown on demand; rotating it asks first, and happens once per form', async () => {
    await visit('/painel/chaves');
    const secret = page.locator('[data-segredo="atual"]');
    assert.equal(await secret.isVisible(), false, 'hidden until asked for');
    await page.getByText('Mostrar o segredo de assinatura').click();
    const shown = await text('[data-segredo="atual"]');
    assert.equal(shown, (await api('GET', '/api/signing-secret', seller.headers)).json().secret);

    await page.getByRole('link', { name: 'Trocar o segredo' }).click();
    await page.waitForURL(`${base}/painel/chaves/segredo/trocar`);
    assert.equal(await text('h1'), 'Trocar o segredo de assinatura?');
    assert.match(await text('[data-confirmar="consequencias"]'), /O atual ainda assina junto por 24 horas/);
    assert.deepEqual(await axeCheck(page), [], 'the confirmation page');
    await page.getByRole('link', { name: 'Cancelar e manter o segredo' }).click();
    await page.waitForURL(`${base}/painel/chaves`);
    assert.equal((await api('GET', '/api/signing-secret', seller.headers)).json().secret, shown, 'cancelled: the same secret');

    await page.goto(`${base}/painel/chaves/segredo/trocar`);
    // The same form sent twice (a double click, a reload) rotates once: the first new secret stays.
    const form = Object.fromEntries(
      await page
        .locator('form[action="/painel/chaves/segredo/trocar"] input')
        .evaluateAll((inputs) => inputs.map((i) => [(i as HTMLInputElement).name, (i as HTMLInputElement).value])),
    );
    const twice = await page.context().request.post(`${base}/painel/chaves/segredo/trocar`, { form, maxRedirects: 0 });
    assert.equal(twice.status(), 303);
    const afterFirst = (await api('GET', '/api/signing-secret', seller.headers)).json().secret;
    assert.notEqual(afterFirst, shown);
    await page.getByRole('button', { name: 'Trocar o segredo' }).click();
    await page.waitForURL(`${base}/painel/chaves?feito=segredo`);
    assert.equal((await api('GET', '/api/signing-secret', seller.headers)).json().secret, afterFirst, 'one rotation for one form');
    assert.match(await text('main'), /Segredo trocado/);
    assert.match(await text('main'), /O segredo anterior também assina até/);
    const rotated = (await api('GET', '/api/signing-secret', seller.headers)).json();
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
      const form = { csrf, valor: '', pedido: 'x'.repeat(24), confirmar: 'sim' };
      const posted = await intruder.context().request.post(`${base}${path}`, { form, maxRedirects: 0 });
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
    await visit('/painel/conta');
    await page.getByLabel('Senha atual').fill('nao-e-a-senha-atual');
    await page.getByLabel(/^Nova senha/).fill(NEW_PASSWORD);
    await page.getByLabel('Repita a nova senha').fill(`${NEW_PASSWORD}-outra`);
    await page.getByRole('button', { name: 'Trocar senha' }).click();
    assert.match(await errorBeside('confirmacao'), /não são iguais/);
    await page.getByLabel('Senha atual').fill('nao-e-a-senha-atual');
    await page.getByLabel(/^Nova senha/).fill(NEW_PASSWORD);
    await page.getByLabel('Repita a nova senha').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Trocar senha' }).click();
    assert.match(await errorBeside('atual'), /senha atual está incorreta/);
    assert.equal(await page.locator('#nova').getAttribute('aria-invalid'), null, 'only the field at fault');
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
