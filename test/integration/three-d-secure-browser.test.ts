// 3-D Secure in a real browser (Debian's Chromium; CONTRACT §11.2): a debit sale made through the
// API, its `payment.card.authentication.url` opened as a seller's checkout would, the gateway's page
// forwarding to the sandbox issuer, "Autenticar" (or "Recusar") pressed there, and the shopper landing
// on the seller's returnUrl (a tiny server of this test's own) with saleId and status in the query;
// at a phone's and a desk's size. Every gateway page on the way is axe-clean, fits 390 px without
// sideways scrolling, and its Content-Security-Policy blocks nothing it needs (no CSP error in the
// console, its style applied). The issuer form of a processor that wants a POST (Adyen's) is checked
// too: its one line of script submits it under the policy's hash, and without JavaScript its
// "Continuar" button does.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page, Response } from 'playwright-core';
import { issuerFormPage, pagePolicy } from '../../src/checkout/pages.ts';
import { cardAutopilotJob } from '../../src/providers/sandbox/autopilot.ts';
import { axeCheck, browserSkipReason, launchBrowser, newPage, overflowOf, SIZES } from '../helpers/browser.ts';
import { authenticationExample, debitExample } from '../helpers/fixtures.ts';
import { type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';
import { tokenOf } from '../helpers/three-d-secure.ts';

type Size = keyof typeof SIZES;
const sizes = Object.keys(SIZES) as Size[];

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Hit {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * The seller's shop: its order page (the sale's returnUrl) says what the gateway told it; /emissor
 * plays an issuer that takes a POST; any other path serves what `pages` holds, with its headers.
 */
function startShop(pages: Map<string, { headers: Record<string, string>; body: string }>) {
  const hits: Hit[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://loja');
      hits.push({
        method: req.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      const html = (status: number, title: string, body: string) =>
        res
          .writeHead(status, { 'content-type': 'text/html; charset=utf-8' })
          .end(
            `<!doctype html><html lang="pt-BR"><head><meta charset="utf-8"><title>${title}</title></head><body><main>${body}</main></body></html>`,
          );
      const served = pages.get(url.pathname);
      if (served) return res.writeHead(200, served.headers).end(served.body);
      if (url.pathname === '/pedido/retorno') {
        const words = (s: string | null) => (s ?? '').replace(/[^A-Za-z0-9_]/g, '');
        return html(
          200,
          'Pedido',
          `<h1>Pedido ${words(url.searchParams.get('pedido'))}</h1><p id="venda">Venda ${words(url.searchParams.get('saleId'))}: ${words(url.searchParams.get('status'))}</p>`,
        );
      }
      if (url.pathname === '/emissor') return html(200, 'Emissor', '<h1>Emissor</h1>');
      html(404, 'Não encontrada', '<h1>Não encontrada</h1>');
    });
  });
  return new Promise<{ server: Server; hits: Hit[]; origin: string; url: (path: string) => string }>((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      resolve({ server, hits, origin, url: (path) => `${origin}${path}` });
    });
  });
}

/**
 * What the browser said went wrong in a page: console errors (a CSP refusal is one) and uncaught
 * exceptions. A page answered 400 or 404 on purpose ("Link expirado", the shop's missing favicon) is no error.
 */
function watch(page: Page): string[] {
  const said: string[] = [];
  page.on('console', (m) => {
    const text = m.text();
    if (/Failed to load resource: the server responded with a status of (400|404)/.test(text)) return;
    if (m.type() === 'error' || /Content Security Policy/i.test(text)) said.push(`${page.url()}: ${text}`);
  });
  page.on('pageerror', (e) => said.push(`${page.url()}: ${e.message}`));
  return said;
}

describe('3-D Secure in a browser: the sale’s authentication url, the sandbox issuer, back at the seller', { skip: browserSkipReason() }, () => {
  let gw: Gateway;
  let seller: SellerKeys;
  let base: string;
  let browser: Browser;
  const served = new Map<string, { headers: Record<string, string>; body: string }>();
  let shop: Awaited<ReturnType<typeof startShop>>;

  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    gw = await startGateway({ env: { PUBLIC_BASE_URL: base } });
    await gw.app.listen({ port, host: '127.0.0.1' });
    seller = await gw.createSeller({ name: 'Loja do Débito', email: 'debito@example.com' });
    shop = await startShop(served);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => shop?.server.close(resolve));
    await gw?.close();
  });

  /** A debit sale whose shopper comes back to the shop's order page. */
  async function debitSale(cardNumber = '5555555555554444') {
    const body = {
      ...debitExample(),
      card: { ...(debitExample().card as object), number: cardNumber },
      authentication: authenticationExample(shop.url('/pedido/retorno?pedido=77')),
    };
    const res = await gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: body });
    assert.equal(res.statusCode, 201, res.body);
    const sale = res.json().sale;
    assert.equal(sale.payment.card.authentication.status, 'REQUIRED');
    assert.ok(sale.payment.card.authentication.url.startsWith(`${base}/checkout/3ds/`), sale.payment.card.authentication.url);
    return { id: sale.id as number, url: sale.payment.card.authentication.url as string };
  }
  const read = async (id: number) => (await gw.app.inject({ method: 'GET', url: `/api/transactions/${id}`, headers: seller.headers })).json();

  /** A gateway page's checks: its policy sent, its style applied under it, no sideways scrolling, axe clean. */
  async function gatewayPage(page: Page, answer: Response | null, said: string[], where: string, status: number): Promise<void> {
    assert.equal(answer?.status(), status, `${where}: ${answer?.status()}`);
    const headers = answer!.headers();
    const policy = headers['content-security-policy'] ?? '';
    assert.match(policy, /default-src 'none'/, `${where}: a strict policy`);
    assert.match(policy, /frame-ancestors 'none'/, `${where}: never framed`);
    assert.equal(headers['cache-control'], 'no-store', `${where}: never cached`);
    assert.equal(await page.locator('html').getAttribute('lang'), 'pt-BR', where);
    assert.equal(await page.locator('meta[name="viewport"]').getAttribute('content'), 'width=device-width, initial-scale=1', where);
    // The page's own <style> ran under the policy's hash: main has its white card on the grey page.
    assert.equal(
      await page.locator('main').evaluate((m) => getComputedStyle(m).backgroundColor),
      'rgb(255, 255, 255)',
      `${where}: its style applied`,
    );
    assert.ok((await overflowOf(page)) <= 0, `${where}: the page is ${await overflowOf(page)} px wider than the window`);
    const width = page.viewportSize()!.width;
    for (const button of await page.getByRole('button').all()) {
      const box = await button.boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= width, `${where}: "${await button.textContent()}" is off screen`);
      assert.ok(box.height >= 44, `${where}: "${await button.textContent()}" is ${box.height} px tall, under a finger's 44`);
    }
    assert.deepEqual(said, [], `${where}: the browser refused nothing`);
    assert.deepEqual(await axeOf(page.url(), page.viewportSize()!), [], `${where}: axe`);
  }

  /**
   * axe on a gateway page: its policy refuses axe's injected script, so the page is opened again with
   * JavaScript off, where the harness checks a copy of it (the same DOM, same size).
   */
  async function axeOf(url: string, viewport: { width: number; height: number }) {
    const copy = await newPage(browser, { viewport, javaScriptEnabled: false });
    try {
      await copy.goto(url);
      return await axeCheck(copy);
    } finally {
      await copy.close();
    }
  }

  for (const size of sizes) {
    test(`"Autenticar" at ${SIZES[size].width}×${SIZES[size].height} (${size}): back at the seller's page, the sale then paid; the link is dead after`, async () => {
      const sale = await debitSale();
      const token = tokenOf(sale.url);
      const page = await newPage(browser, { viewport: SIZES[size] });
      const said = watch(page);
      try {
        // A return without the issuer's result (a shopper's stray reload) is a page in words, and spends nothing.
        const incomplete = await page.goto(`${base}/checkout/3ds/${token}/return`);
        await gatewayPage(page, incomplete, said, `a return without its result (${size})`, 400);
        assert.equal(await page.title(), 'Retorno incompleto');

        const issuer = await page.goto(sale.url);
        // The gateway's page forwarded the shopper to the issuer (the sandbox's, asked with a GET).
        assert.equal(page.url(), `${base}/sandbox/3ds/${token}`);
        const forwarded = await issuer!.request().redirectedFrom()?.response();
        assert.equal(forwarded?.status(), 303, 'the gateway page redirects');
        assert.equal(issuer!.request().redirectedFrom()?.url(), sale.url);
        await gatewayPage(page, issuer, said, `the sandbox issuer (${size})`, 200);
        assert.equal(await page.title(), 'Banco sandbox: autenticação');
        assert.match((await page.locator('main').textContent()) ?? '', /Confirme a compra de R\$\s49,90/);
        await page.getByRole('button', { name: 'Recusar' }).waitFor();

        await page.getByRole('button', { name: 'Autenticar' }).click();
        await page.waitForURL((u) => u.origin === shop.origin).catch((e: Error) => assert.fail(`${e.message}\n${said.join('\n')}`));
        const landed = new URL(page.url());
        assert.equal(landed.pathname, '/pedido/retorno');
        assert.equal(landed.searchParams.get('pedido'), '77', "the seller's own query kept");
        assert.equal(landed.searchParams.get('saleId'), String(sale.id));
        assert.equal(landed.searchParams.get('status'), 'PENDENTE', 'authenticated: the processor has the sale now');
        assert.equal(await page.locator('#venda').textContent(), `Venda ${sale.id}: PENDENTE`);
        assert.deepEqual(said, [], 'the way back to the seller was refused nothing');
        const arrived = shop.hits.filter((h) => h.path === '/pedido/retorno' && h.query.get('saleId') === String(sale.id));
        assert.equal(arrived.length, 1, 'the shopper arrived once');
        assert.equal(arrived[0]!.headers.referer, undefined, 'no gateway address leaks to the seller as a referrer');
        assert.equal((await read(sale.id)).authenticated, true);

        // The sandbox plays the rest as it does for any card sale: taken, then paid.
        for (let i = 0; i < 20 && (await read(sale.id)).status !== 'PAGO'; i++) {
          await new Promise((resolve) => setTimeout(resolve, 350));
          await cardAutopilotJob.run(gw.ctx);
        }
        assert.equal((await read(sale.id)).status, 'PAGO');

        // The sale moved: its link (and the issuer's page) is dead, said in words.
        const dead = await page.goto(sale.url);
        await gatewayPage(page, dead, said, `the dead link (${size})`, 404);
        assert.equal(await page.title(), 'Link expirado');
        assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Link expirado');
        const issuerGone = await page.goto(`${base}/sandbox/3ds/${token}`);
        await gatewayPage(page, issuerGone, said, `the issuer page of a dead link (${size})`, 404);
        const forged = await page.goto(`${base}/checkout/3ds/${'A'.repeat(32)}`);
        await gatewayPage(page, forged, said, `a forged link (${size})`, 404);
      } finally {
        await page.close();
      }
    });
  }

  test('"Recusar": back at the seller\'s page with status=RECUSADO; a card the issuer never authenticates is refused too', async () => {
    for (const [card, button] of [
      ['5555555555554444', 'Recusar'],
      ['4000000000000002', 'Autenticar'],
    ] as const) {
      const sale = await debitSale(card);
      const page = await newPage(browser, { viewport: SIZES.celular });
      const said = watch(page);
      try {
        await page.goto(sale.url);
        assert.equal(page.url(), `${base}/sandbox/3ds/${tokenOf(sale.url)}`);
        await page.getByRole('button', { name: button }).click();
        await page.waitForURL((u) => u.origin === shop.origin).catch((e: Error) => assert.fail(`${e.message}\n${said.join('\n')}`));
        const landed = new URL(page.url());
        assert.equal(landed.searchParams.get('saleId'), String(sale.id), `card ${card}, ${button}`);
        assert.equal(landed.searchParams.get('status'), 'RECUSADO', `card ${card}, ${button}`);
        assert.deepEqual(said, [], `card ${card}, ${button}: the browser refused nothing`);
        const read_ = await read(sale.id);
        assert.equal(read_.status, 'RECUSADO');
        assert.equal(read_.authenticated, false);
        const dead = await page.goto(sale.url);
        await gatewayPage(page, dead, said, `the dead link of a refused sale (${card})`, 404);
        assert.equal(await page.title(), 'Link expirado');
      } finally {
        await page.close();
      }
    }
  });

  for (const size of sizes) {
    test(`an issuer that wants a POST (${size}): the form submits itself under the policy, or by "Continuar" without JavaScript`, async () => {
      // The page as the gateway serves it for a POST action (src/checkout/routes.ts): its policy lets
      // the form go to the issuer's origin only, and runs only the line that submits it.
      const data = { PaReq: 'eyJ0aHJlZURTU2VydmVyVHJhbnNJRCI6IjEyMyJ9', MD: 'c2FsZS0xMjM=', TermUrl: `${base}/checkout/3ds/x/return` };
      served.set(`/forma-${size}`, {
        headers: {
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy': pagePolicy(shop.origin, true),
          'cache-control': 'no-store',
          'referrer-policy': 'no-referrer',
        },
        body: issuerFormPage({ method: 'POST', url: shop.url('/emissor'), data }),
      });
      const posted = () => shop.hits.filter((h) => h.path === '/emissor' && h.method === 'POST');
      const before = posted().length;

      const page = await newPage(browser, { viewport: SIZES[size] });
      const said = watch(page);
      try {
        await page.goto(shop.url(`/forma-${size}`));
        await page.waitForURL(shop.url('/emissor'));
        assert.deepEqual(said, [], 'the script and style ran under their hashes; the form went to the issuer');
        assert.equal(posted().length, before + 1, 'submitted once, by itself');
        assert.deepEqual(Object.fromEntries(new URLSearchParams(posted().at(-1)!.body)), data, "the issuer's fields, as it gave them");
      } finally {
        await page.close();
      }

      const still = await newPage(browser, { viewport: SIZES[size], javaScriptEnabled: false });
      const stillSaid = watch(still);
      try {
        const answer = await still.goto(shop.url(`/forma-${size}`));
        assert.equal(still.url(), shop.url(`/forma-${size}`), 'without JavaScript the page waits for the shopper');
        assert.match(answer!.headers()['content-security-policy'] ?? '', /form-action http:\/\/127\.0\.0\.1:\d+;/);
        assert.equal(await still.locator('main').evaluate((m) => getComputedStyle(m).backgroundColor), 'rgb(255, 255, 255)', 'its style applied');
        assert.ok((await overflowOf(still)) <= 0, `${size}: no sideways scrolling`);
        const box = await still.getByRole('button', { name: 'Continuar' }).boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= SIZES[size].width && box.height >= 44, `${size}: "Continuar" on screen, a finger's size`);
        assert.deepEqual(await axeCheck(still), [], `${size}: axe`);
        await still.getByRole('button', { name: 'Continuar' }).click();
        await still.waitForURL(shop.url('/emissor'));
        assert.equal(posted().length, before + 2, '"Continuar" sent it');
        assert.deepEqual(stillSaid, [], 'the browser refused nothing');
      } finally {
        await still.close();
      }
    });
  }
});
