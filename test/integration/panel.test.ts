// The seller panel in a real browser (Debian's Chromium through playwright-core), with its own
// JavaScript off: the panel must work with plain forms. CONTRACT §12: invite → password → session,
// Início with the balances and the sales chart, CSRF on every form, 5 wrong passwords → a wait.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { axeCheck, browserSkipReason, launchBrowser, newPage } from '../helpers/browser.ts';
import { pixExample } from '../helpers/fixtures.ts';
import { adminHeaders, type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';

const PASSWORD = 'senha-de-teste-longa';

describe('the seller panel in a browser', { skip: browserSkipReason() }, () => {
  let gw: Gateway;
  let browser: Browser;
  let base: string;
  let seller: SellerKeys;

  before(async () => {
    gw = await startGateway();
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
    await gw.ctx.providers.listeningAt(base);
    browser = await launchBrowser();
    seller = await gw.createSeller({ name: 'Loja Painel', email: 'painel@example.com' });
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
  });

  async function invite(sellerId: number): Promise<string> {
    const res = await gw.app.inject({ method: 'POST', url: `/admin/sellers/${sellerId}/panel-invites`, headers: adminHeaders });
    assert.equal(res.statusCode, 201, res.body);
    const { url, expiresAt } = res.json();
    assert.ok(Date.parse(expiresAt) - Date.now() > 71 * 3600_000, `valid 72 h: ${expiresAt}`);
    // The invite names the host it was asked on; the browser reaches the listening gateway.
    return `${base}${new URL(url).pathname}`;
  }

  test('accept an invite, land on Início: balances in R$, the 30-day chart, the latest sale; no serious axe violation', async () => {
    const created = await gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: pixExample() });
    const id = created.json().sale.id as number;
    await gw.app.inject({ method: 'POST', url: `/admin/transactions/${id}/events`, headers: adminHeaders, payload: { event: 'PAYMENT_CONFIRMED' } });

    const page = await newPage(browser, { javaScriptEnabled: false });
    const link = await invite(seller.id);
    await page.goto(link);
    assert.equal(await page.locator('h1').textContent(), 'Crie sua senha');
    assert.deepEqual(await axeCheck(page), [], 'invite page');
    // Two passwords that differ: the error stands beside the second, which it is about.
    await page.getByLabel('Senha', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Repita a senha').fill(`${PASSWORD}-outra`);
    await page.getByRole('button', { name: 'Criar senha e entrar' }).click();
    assert.equal(await page.locator('#confirmacao').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator('#confirmacao').getAttribute('aria-describedby'), 'confirmacao-erro');
    assert.equal(await page.locator('#confirmacao-erro').textContent(), 'As duas senhas não são iguais.');
    assert.equal(await page.locator('#senha').getAttribute('aria-invalid'), null, 'the first one is not at fault');
    assert.deepEqual(await axeCheck(page), [], 'the error beside its field');
    await page.getByLabel('Senha', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Repita a senha').fill(PASSWORD);
    await page.getByRole('button', { name: 'Criar senha e entrar' }).click();
    await page.waitForURL(`${base}/painel`);
    assert.equal(await page.locator('[data-saldo="disponivel"]').textContent(), 'R$ 147,02');
    assert.equal(await page.locator('[data-saldo="total"]').textContent(), 'R$ 147,02');
    assert.match((await page.locator('svg.grafico').getAttribute('aria-label')) ?? '', /R\$ 150,00 no total/);
    assert.match((await page.locator('table').textContent()) ?? '', new RegExp(`#${id}.*R\\$ 150,00.*Pago.*PIX`, 's'));
    assert.deepEqual(await axeCheck(page), [], 'Início');

    // The invite is one-use.
    const again = await page.goto(link);
    assert.equal(again?.status(), 404);
    assert.equal(await page.locator('h1').textContent(), 'Convite inválido');
    await page.context().close();
  });

  test('log in and out; a form posted without its CSRF token is refused; another browser has no session', async () => {
    const page = await newPage(browser, { javaScriptEnabled: false });
    await page.goto(`${base}/painel`);
    await page.waitForURL(`${base}/painel/entrar`);
    assert.deepEqual(await axeCheck(page), [], 'login page');
    await page.getByLabel('E-mail').fill('painel@example.com');
    await page.getByLabel('Senha').fill(PASSWORD);
    await page.getByRole('button', { name: 'Entrar' }).click();
    await page.waitForURL(`${base}/painel`);

    // A forged post (no token, the session cookie sent along as a browser would) is refused.
    const forged = await page.context().request.post(`${base}/painel/sair`, { form: { csrf: 'forged' }, maxRedirects: 0 });
    assert.equal(forged.status(), 403);
    await page.goto(`${base}/painel`);
    assert.equal(await page.locator('h1').textContent(), 'Início', 'still logged in');

    await page.getByRole('button', { name: 'Sair' }).click();
    await page.waitForURL(`${base}/painel/entrar`);
    await page.goto(`${base}/painel`);
    await page.waitForURL(`${base}/painel/entrar`);
    await page.context().close();
  });

  test('five wrong passwords lock the account for a while (429), even for the right one', async () => {
    const other = await gw.createSeller({ name: 'Outra', email: 'outra@example.com' });
    const page = await newPage(browser, { javaScriptEnabled: false });
    await page.goto(await invite(other.id));
    await page.getByLabel('Senha', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Repita a senha').fill(PASSWORD);
    await page.getByRole('button', { name: 'Criar senha e entrar' }).click();
    await page.waitForURL(`${base}/painel`);
    await page.context().clearCookies();

    const attempt = async (password: string) => {
      await page.goto(`${base}/painel/entrar`);
      await page.getByLabel('E-mail').fill('outra@example.com');
      await page.getByLabel('Senha').fill(password);
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.getByRole('button', { name: 'Entrar' }).click(),
      ]);
      return answer.status();
    };
    for (let i = 0; i < 5; i++) assert.equal(await attempt('errada-errada-errada'), 401, `attempt ${i + 1}`);
    assert.equal(await attempt(PASSWORD), 429, 'locked: even the right password waits');
    assert.match((await page.locator('[role="alert"]').textContent()) ?? '', /Tente de novo em \d+ min/);
    await page.context().close();
  });
});
