// Every panel page on a phone (390×844) and on a desk (1280×900), JavaScript off (CONTRACT §12): the
// page never scrolls sideways, the whole menu is on screen, no code of the system shows where a word
// belongs, and axe-core finds nothing serious. The account first holds what shows those codes: paid,
// pending, in-processing and refunded sales of every method, debit sales waiting for, passing and
// failing 3-D Secure, cashouts, delivered notifications.
// Under SCREENSHOTS=1 (`npm run screenshots`) each page is saved for the README at both sizes.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { CASHOUT_STATUSES } from '../../src/domain/cashout-states.ts';
import { PIX_KEY_TYPES } from '../../src/domain/pix-keys.ts';
import { PAYMENT_METHODS, POSTING_KINDS, TRANSACTION_EVENTS, TRANSACTION_STATUSES } from '../../src/domain/transaction-states.ts';
import { createDeliveryJob } from '../../src/notifications/delivery.ts';
import { axeCheck, browserSkipReason, launchBrowser, newPage, overflowOf, SIZES, screenshot } from '../helpers/browser.ts';
import { boletoExample, cardExample, debitExample, pixExample } from '../helpers/fixtures.ts';
import { adminHeaders, type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { authenticateInSandbox, shopperReturns, tokenOf } from '../helpers/three-d-secure.ts';

const PASSWORD = 'senha-dos-tamanhos-longa';
const EMAIL = 'tamanhos@example.com';

// Every code the system stores or the API speaks, as whole words. Not PIX, MED, CPF nor CNPJ: those
// are the words Brazilians use. The ledger's own kinds and accounts are there too.
const codes = [
  ...TRANSACTION_STATUSES.filter((s) => s !== 'MED'),
  ...PAYMENT_METHODS.filter((m) => m !== 'PIX'),
  ...TRANSACTION_EVENTS,
  ...CASHOUT_STATUSES,
  ...PIX_KEY_TYPES.filter((t) => t !== 'CPF' && t !== 'CNPJ'),
  ...POSTING_KINDS,
  ...['REFUND_REQUESTED', 'REFUND_SUCCEEDED', 'REFUND_FAILED', 'RESERVE_RELEASE', 'CASHOUT_CREATED', 'CASHOUT_COMPLETED', 'CASHOUT_RETURNED'],
  ...[
    'PENDING',
    'DELIVERED',
    'FAILED',
    'SUCCEEDED',
    'TRANSACTION_WEBHOOK',
    'TRANSACTION_POSTBACK',
    'WITHDRAWAL_WEBHOOK',
    'TRANSACTION',
    'WITHDRAWAL',
  ],
  ...['REALIZADO', 'NAO_REALIZADO', 'available', 'blocked', 'customer_funds', 'fee_revenue', 'payouts'],
];
const raw_code = new RegExp(`\\b(${[...new Set(codes)].join('|')})\\b`, 'g');

describe('every panel page at a phone’s and a desk’s size', { skip: browserSkipReason() }, () => {
  let gw: Gateway;
  let browser: Browser;
  let rx: Receiver;
  let base: string;
  let seller: SellerKeys;
  let invitePath: string;
  const delivery = createDeliveryJob({ retryDelaysMs: [60_000] });
  const ids = {
    pendingPix: 0,
    paidPix: 0,
    card: 0,
    boleto: 0,
    debit: 0,
    waitingDebit: 0,
    refusedDebit: 0,
    webhook: 0,
    chargebackLost: 0,
    medLost: 0,
    refunded: 0,
  };

  const api = async (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: object) => {
    const res = await gw.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  const event = (id: number, name: string) => api('POST', `/admin/transactions/${id}/events`, adminHeaders, { event: name });
  const saleOf = async (body: object) => (await api('POST', '/api/sales', seller.headers, body)).sale;
  const sale = async (body: object) => (await saleOf(body)).id as number;

  /** The account's history: what every label of the panel is there to say. */
  async function fill(): Promise<void> {
    ids.webhook = (await api('POST', '/api/webhooks', seller.headers, { url: rx.url('/avisos'), types: ['TRANSACTION', 'WITHDRAWAL'] })).id;
    ids.pendingPix = await sale(pixExample());
    ids.paidPix = await sale(pixExample({ amount: 30000 }));
    await event(ids.paidPix, 'PAYMENT_CONFIRMED');
    ids.boleto = await sale(boletoExample());
    // A card sale sent to the processor and approved, then refunded in part (the sandbox refunds cards at once).
    ids.card = await sale(cardExample());
    await event(ids.card, 'SENT_TO_PROCESSOR');
    await event(ids.card, 'APPROVED');
    await api('POST', `/api/transactions/${ids.card}/refund`, { ...seller.headers, 'idempotency-key': 'tamanhos-estorno' }, { amount: 5000 });
    // Three sales refunded three ways: a chargeback lost, a MED lost, a refund of the whole amount.
    ids.chargebackLost = await sale(cardExample());
    for (const move of ['SENT_TO_PROCESSOR', 'APPROVED', 'CHARGEBACK_OPENED', 'CHARGEBACK_CONFIRMED']) await event(ids.chargebackLost, move);
    ids.medLost = await sale(pixExample({ amount: 4000 }));
    for (const move of ['PAYMENT_CONFIRMED', 'MED_OPENED', 'MED_LOST']) await event(ids.medLost, move);
    ids.refunded = await sale(pixExample({ amount: 2500 }));
    for (const move of ['PAYMENT_CONFIRMED', 'REFUNDED']) await event(ids.refunded, move);
    // Debit sales (3-D Secure): one authenticated by its shopper and sent to the processor, one still
    // waiting for its shopper, one whose shopper the issuer refused.
    const debit = await saleOf(debitExample());
    ids.debit = debit.id;
    await authenticateInSandbox(gw.app, debit);
    await event(ids.debit, 'SENT_TO_PROCESSOR');
    ids.waitingDebit = await sale(debitExample());
    const refused = await saleOf(debitExample());
    ids.refusedDebit = refused.id;
    const back = await shopperReturns(gw.app, tokenOf(refused.payment.card.authentication.url), 'sandbox-refused');
    assert.equal(back.statusCode, 303, back.body);
    const pay = (key: object, order: string) =>
      api('POST', '/api/public/cashout', { ...seller.headers, 'idempotency-key': order }, { amount: 100, ...key });
    const done = (await pay({ pixKey: '52998224725', pixKeyType: 'CPF' }, 'tamanhos-saque-1')).id;
    for (const move of ['PROCESSING', 'COMPLETED']) await api('POST', `/admin/cashouts/${done}/events`, adminHeaders, { event: move });
    await pay({ pixKey: '+5511987654321', pixKeyType: 'PHONE' }, 'tamanhos-saque-2');
    for (let i = 0; i < 20 && (await delivery.run(gw.ctx)) > 0; i++) await delivery.settled();
    await delivery.settled();
  }

  before(async () => {
    gw = await startGateway({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
    await gw.ctx.providers.listeningAt(base);
    rx = await startReceiver();
    browser = await launchBrowser();
    seller = await gw.createSeller({ name: 'Loja dos Tamanhos', email: EMAIL });
    invitePath = new URL((await api('POST', `/admin/sellers/${seller.id}/panel-invites`, adminHeaders)).url).pathname;
    await fill();
  });
  after(async () => {
    await delivery.close();
    await browser?.close();
    await rx?.close();
    await gw?.close();
  });

  /** The checks every page passes at every size; then its screenshot (written only under SCREENSHOTS=1). */
  async function look(page: Page, name: string, size: keyof typeof SIZES, shot = true): Promise<string> {
    const where = `${name} (${size})`;
    assert.equal(await page.locator('meta[name="viewport"]').getAttribute('content'), 'width=device-width, initial-scale=1', where);
    assert.ok((await overflowOf(page)) <= 0, `${where}: the page is ${await overflowOf(page)} px wider than the window`);
    const shown = (await page.evaluate('document.body.innerText')) as string;
    assert.deepEqual(shown.match(raw_code) ?? [], [], `${where}: codes shown instead of words`);
    const width = SIZES[size].width;
    for (const link of await page.locator('header a, header button').all()) {
      const box = await link.boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= width, `${where}: "${await link.textContent()}" is off screen`);
    }
    // The money of a list (Início, Vendas, Extrato) is on screen without scrolling sideways.
    for (const money of await page.locator('[data-venda-valor], [data-extrato="valor"], [data-extrato="saldo"]').all()) {
      const box = await money.boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= width, `${where}: "${await money.textContent()}" is off screen`);
    }
    assert.deepEqual(await axeCheck(page), [], `${where}: axe`);
    if (shot) await screenshot(page, `painel-${name}-${size}`);
    return shown;
  }

  async function visit(page: Page, path: string, name: string, size: keyof typeof SIZES, status = 200, shot = true): Promise<string> {
    const answer = await page.goto(`${base}${path}`);
    assert.equal(answer?.status(), status, `${path}: ${answer?.status()}`);
    return look(page, name, size, shot);
  }

  test('the check of raw codes catches one', () => {
    assert.deepEqual('Vendas: PENDENTE, CREDIT_CARD; Pago via PIX (MED), Pendente'.match(raw_code), ['PENDENTE', 'CREDIT_CARD']);
  });

  for (const size of Object.keys(SIZES) as (keyof typeof SIZES)[]) {
    test(`before logging in, at ${SIZES[size].width}×${SIZES[size].height} (${size}): Entrar and an invite`, async () => {
      const page = await newPage(browser, { javaScriptEnabled: false, viewport: SIZES[size] });
      try {
        await visit(page, '/painel/entrar', 'entrar', size);
        await visit(page, invitePath, 'convite', size);
        await page.getByLabel('Senha', { exact: true }).fill('curta');
        await page.getByLabel('Repita a senha').fill('curta');
        await page.getByRole('button', { name: 'Criar senha e entrar' }).click();
        assert.match(await look(page, 'convite-erro', size), /pelo menos \d+ caracteres/);
      } finally {
        await page.close();
      }
    });
  }

  for (const size of Object.keys(SIZES) as (keyof typeof SIZES)[]) {
    test(`logged in, at ${SIZES[size].width}×${SIZES[size].height} (${size}): every page`, async () => {
      const page = await newPage(browser, { javaScriptEnabled: false, viewport: SIZES[size] });
      try {
        await logIn(page);
        await everyPage(page, size);
      } finally {
        await page.close();
      }
    });
  }

  for (const size of Object.keys(SIZES) as (keyof typeof SIZES)[]) {
    test(`a MED known only from the operator's events, at ${SIZES[size].width}×${SIZES[size].height} (${size}): said in words, no defence form`, async () => {
      const page = await newPage(browser, { javaScriptEnabled: false, viewport: SIZES[size] });
      try {
        await logIn(page);
        // No infraction listed by a PSP: nothing to defend there, so no form; the block is still shown.
        const open = await sale(pixExample({ amount: 6000 }));
        for (const move of ['PAYMENT_CONFIRMED', 'MED_OPENED']) await event(open, move);
        const shown = await visit(page, `/painel/vendas/${open}`, `venda-med-${open}`, size, 200, false);
        assert.equal(await page.locator('[data-venda="status"]').textContent(), 'Em contestação (MED)');
        assert.equal(await page.locator('[data-med="status"]').textContent(), 'Aberta');
        assert.equal(await page.locator('[data-med="motivo"]').textContent(), 'Motivo não informado pelo PSP');
        assert.match((await page.locator('[data-med="desde"]').textContent()) ?? '', /^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}$/);
        assert.equal(await page.locator('[data-med="prazo"]').count(), 0, 'no deadline known');
        const net = (await api('GET', `/api/transactions/${open}`, seller.headers)).netAmount as number;
        assert.equal(await page.locator('[data-med="bloqueado"]').textContent(), `R$ ${Math.floor(net / 100)},${String(net % 100).padStart(2, '0')}`);
        assert.equal(await page.locator('textarea#justification').count(), 0, 'no form: no infraction to defend');
        assert.doesNotMatch(shown, /\b(ABERTA|EM_DEFESA|ACEITA|REJEITADA|CANCELADA)\b/);
        // The MED lost by the operator's events: accepted, the money returned.
        await visit(page, `/painel/vendas/${ids.medLost}`, `venda-med-perdida-${ids.medLost}`, size, 200, false);
        assert.equal(await page.locator('[data-med="status"]').textContent(), 'Aceita: o valor foi devolvido ao pagador');
        assert.equal(await page.locator('[data-med="bloqueado"]').count(), 0, 'nothing blocked once lost');
        assert.match(await visit(page, '/painel/extrato', 'extrato-med', size, 200, false), /Contestação \(MED\) aberta: valor bloqueado/);
      } finally {
        await page.close();
      }
    });
  }

  /** Accepts the invite the first time, then logs in with the password it set. */
  async function logIn(page: Page): Promise<void> {
    const invite = await page.goto(`${base}${invitePath}`);
    if (invite?.status() === 200) {
      await page.getByLabel('Senha', { exact: true }).fill(PASSWORD);
      await page.getByLabel('Repita a senha').fill(PASSWORD);
      await page.getByRole('button', { name: 'Criar senha e entrar' }).click();
    } else {
      await page.goto(`${base}/painel/entrar`);
      await page.getByLabel('E-mail').fill(EMAIL);
      await page.getByLabel('Senha').fill(PASSWORD);
      await page.getByRole('button', { name: 'Entrar' }).click();
    }
    await page.waitForURL(`${base}/painel`);
  }

  async function everyPage(page: Page, size: keyof typeof SIZES): Promise<void> {
    const home = await visit(page, '/painel', 'inicio', size);
    assert.match(home, /Pago.*Cartão de crédito/s);
    assert.equal(await page.locator('header [data-loja]').textContent(), 'Loja dos Tamanhos', "the shop's name in the header");
    assert.ok((await page.locator('td[data-venda-valor]').count()) > 0, 'Início lists sales with their amount');
    const sales = await visit(page, '/painel/vendas', 'vendas', size);
    for (const word of ['Estornado (chargeback)', 'Estornado (MED)', 'Estornado (reembolso)'])
      assert.ok(sales.includes(word), `Vendas shows "${word}"`);
    assert.ok(!/Estornado(?! \()/.test((await page.locator('table').textContent()) ?? ''), 'no refunded sale without saying how');
    for (const word of ['Pendente', 'Pago', 'Em processamento', 'Cartão de débito', 'Cartão de crédito', 'Boleto', 'PIX', 'Aguardando autenticação'])
      assert.ok(sales.includes(word), `Vendas shows "${word}"`);
    const pix = await visit(page, `/painel/vendas/${ids.pendingPix}`, 'venda-pix', size);
    assert.match(pix, /529\.982\.247-25/);
    assert.match(
      (await page.locator('[data-venda="validade-pix"]').textContent()) ?? '',
      /^(\d{2}\/\d{2}\/\d{4} \d{2}:\d{2} \(horário de Brasília\)|Não expira.*)$/,
    );
    assert.match(pix, /Ao cancelar, a venda não poderá mais ser paga\./);
    assert.doesNotMatch(pix, /Cancelada, a venda/);
    const card = await visit(page, `/painel/vendas/${ids.card}`, 'venda-cartao', size);
    assert.equal(await page.locator('header [data-loja]').textContent(), 'Loja dos Tamanhos');
    assert.match((await page.locator('[data-venda="endereco"]').textContent()) ?? '', /CEP \d{5}-\d{3}/, 'the shipping address');
    assert.match((await page.locator('[data-venda="frete"]').textContent()) ?? '', /^R\$ \d/, 'the shipping fee');
    assert.match(card, /Status informado/);
    assert.doesNotMatch(card, /Status anunciado/);
    assert.match(card, /Pendente → Em processamento \(enviada à operadora do cartão\)/);
    assert.match(card, /Concluído/, 'the refund, in words');
    assert.match(card, /Webhook de venda.*Pago.*Entregue \(1 tentativa, HTTP 200\)/s, 'the notification, in words');
    await visit(page, `/painel/vendas/${ids.boleto}`, 'venda-boleto', size);
    assert.match((await page.locator('[data-venda="linha-digitavel"]').textContent()) ?? '', /^\d{5}\.\d{5} \d{5}\.\d{6} \d{5}\.\d{6} \d \d{14}$/);
    for (const [id, word, how] of [
      [ids.chargebackLost, 'Estornado (chargeback)', /Em chargeback → Estornado \(chargeback\)/],
      [ids.medLost, 'Estornado (MED)', /Em contestação \(MED\) → Estornado \(MED\)/],
      [ids.refunded, 'Estornado (reembolso)', /Pago → Estornado \(reembolso\)/],
    ] as const) {
      const shown = await visit(page, `/painel/vendas/${id}`, `venda-estornada-${id}`, size, 200, false);
      assert.equal(await page.locator('[data-venda="status"]').textContent(), word);
      assert.match(shown, how);
    }
    // The 3-D Secure words (no screenshots of their own for the README).
    const debit = await visit(page, `/painel/vendas/${ids.debit}`, 'venda-debito', size, 200, false);
    assert.match(debit, /Em processamento.*Autenticado com 3-D Secure/s);
    assert.match(await visit(page, `/painel/vendas/${ids.waitingDebit}`, 'venda-debito-aguardando', size, 200, false), /Aguardando autenticação/);
    assert.match(
      await visit(page, `/painel/vendas/${ids.refusedDebit}`, 'venda-debito-recusada', size, 200, false),
      /Recusado.*Autenticação recusada ou abandonada/s,
    );
    const cashouts = await visit(page, '/painel/saques', 'saques', size);
    assert.match(cashouts, /CPF: 529\.982\.247-25.*Concluído/s);
    assert.match(cashouts, /Telefone: \+55 11 98765-4321.*Pendente/s);
    await page.getByLabel('Valor (R$)').fill('99,99');
    await page.getByLabel('Chave PIX').fill('529.982.247-25');
    await page.getByRole('button', { name: 'Revisar saque' }).click();
    assert.match(await look(page, 'saques-erro', size), /abaixo do mínimo/);
    await page.getByLabel('Valor (R$)').fill('100,00');
    await page.getByRole('button', { name: 'Revisar saque' }).click();
    assert.match(await look(page, 'saque-revisar', size), /CPF: 529\.982\.247-25/);
    const statement = await visit(page, '/painel/extrato', 'extrato', size);
    for (const line of ['Venda paga', 'Tarifa da venda', 'Estorno pedido', 'Saque pedido', 'Saque concluído'])
      assert.ok(statement.includes(line), `Extrato shows "${line}"`);
    assert.match(await visit(page, '/painel/integracoes', 'integracoes', size), /Webhook de saque.*Concluído.*Entregue/s);
    await visit(page, `/painel/integracoes/${ids.webhook}/remover`, 'integracoes-remover', size);
    await visit(page, '/painel/chaves', 'chaves', size);
    assert.match(await visit(page, `/painel/chaves/${seller.publicKey}/revogar`, 'chaves-revogar', size), /única chave ativa/);
    await visit(page, '/painel/chaves/segredo/trocar', 'chaves-segredo', size);
    await visit(page, '/painel/conta', 'conta', size);
    await visit(page, '/painel/nao-existe', 'nao-encontrada', size, 404);
    // The icon: linked from every page, and at /favicon.ico where a browser looks on its own.
    assert.equal(await page.locator('link[rel="icon"]').getAttribute('href'), '/painel/favicon.svg');
    for (const [path, type] of [
      ['/favicon.ico', 'image/x-icon'],
      ['/painel/favicon.svg', 'image/svg+xml'],
    ] as const) {
      const icon = await page.context().request.get(`${base}${path}`);
      assert.equal(icon.status(), 200, path);
      assert.equal(icon.headers()['content-type'], type, path);
      assert.match(icon.headers()['cache-control'] ?? '', /max-age=\d+/, path);
    }
  }
});
