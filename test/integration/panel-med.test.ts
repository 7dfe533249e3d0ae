// A PIX dispute (MED 2.0, CONTRACT §11.5, §12) in the seller panel, in a real browser (Debian's
// Chromium, JavaScript off), at a phone's and a desk's size: PIX sales paid and contested through the
// sandbox PSP; the sale's page says why, since when, until when, the infraction's status and the money
// blocked; the defence form refuses a short justification beside its field, then sends one; the BCB
// rejects one infraction (the sale back to Pago) and accepts another (Estornado (MED)); the Extrato
// says the block, its release and the loss. On every page: axe-core finds nothing serious, no code
// shows where a word belongs, the page never scrolls sideways.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { run, sql } from '../../src/db/sql.ts';
import { INFRACTION_STATUSES } from '../../src/domain/provider-facts.ts';
import { POSTING_KINDS, TRANSACTION_EVENTS, TRANSACTION_STATUSES } from '../../src/domain/transaction-states.ts';
import { axeCheck, browserSkipReason, launchBrowser, newPage, overflowOf, SIZES } from '../helpers/browser.ts';
import { pixExample } from '../helpers/fixtures.ts';
import { adminHeaders, type Gateway, railJob, type SellerKeys, startGateway } from '../helpers/gateway.ts';

const PASSWORD = 'senha-da-contestacao-longa';
const EMAIL = 'contestacao@example.com';
// What the sandbox PSP refuses a defence with (packages/sandbox-psp), as the gateway records it.
const REFUSAL = 'Defesa recusada: prazo de análise encerrado (falha simulada pelo sandbox).';

// Every code a MED stores or the API speaks, as whole words (MED and PIX are the words Brazilians use).
const codes = [
  ...TRANSACTION_STATUSES.filter((s) => s !== 'MED'),
  ...TRANSACTION_EVENTS,
  ...POSTING_KINDS,
  ...INFRACTION_STATUSES,
  ...['CANCELADA_EFI', 'SENDING', 'SENT', 'REFUSED', 'INVALID_TRANSITION', 'VALIDATION_ERROR', 'justification'],
];
const raw_code = new RegExp(`\\b(${[...new Set(codes)].join('|')})\\b`, 'g');

/** An instant as the panel writes it, in Brasília's time (UTC−3 all year since 2019): "dd/mm/aaaa hh:mm". */
function brasilia(iso: string): string {
  const d = new Date(Date.parse(iso) - 3 * 3600_000);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getUTCDate())}/${two(d.getUTCMonth() + 1)}/${d.getUTCFullYear()} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}`;
}
/** Cents below R$ 1.000,00 as the panel writes them. */
const brl = (cents: number) => `${cents < 0 ? '-' : ''}R$ ${Math.floor(Math.abs(cents) / 100)},${String(Math.abs(cents) % 100).padStart(2, '0')}`;

describe('a PIX dispute (MED) in the panel, at a phone’s and a desk’s size', { skip: browserSkipReason() }, () => {
  let gw: Gateway;
  let browser: Browser;
  let base: string;
  let seller: SellerKeys;
  let invitePath: string;

  const call = async (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: object) =>
    gw.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  const api = async (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: object) => {
    const res = await call(method, url, headers, payload);
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  const sale = async (id: number) => api('GET', `/api/transactions/${id}`, seller.headers);
  /** A PIX sale paid by its payer at the sandbox PSP. */
  async function paidPix(amount: number): Promise<number> {
    const { id } = (await api('POST', '/api/sales', seller.headers, pixExample({ amount }))).sale;
    await api('POST', `/sandbox/sales/${id}/pay`, adminHeaders, {});
    assert.equal((await sale(id)).status, 'PAGO');
    return id;
  }
  /** The payer's bank contests the sale's Pix: the gateway reads the infraction, the sale goes to MED. */
  async function contest(id: number): Promise<string> {
    const res = await call('POST', `/sandbox/sales/${id}/infraction`, adminHeaders);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().status, 'MED');
    return res.json().idInfracao;
  }
  async function decide(idInfracao: string, status: 'ACEITA' | 'REJEITADA'): Promise<void> {
    await api('POST', `/sandbox/infractions/${idInfracao}/resolve`, adminHeaders, { status });
  }
  /** Waits (bounded) for the sale's status: the sandbox PSP makes a devolução on its own, a moment later. */
  async function reaches(id: number, status: string): Promise<void> {
    for (let i = 0; i < 200; i++) {
      if ((await sale(id)).status === status) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.fail(`sale ${id} never reached ${status}: ${(await sale(id)).status}`);
  }

  before(async () => {
    gw = await startGateway();
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
    await gw.ctx.providers.listeningAt(base);
    await railJob(gw, 'pix-reconcile').run(gw.ctx); // registers the PSP's callback to this gateway
    browser = await launchBrowser();
    seller = await gw.createSeller({ name: 'Loja da Contestação', email: EMAIL });
    invitePath = new URL((await api('POST', `/admin/sellers/${seller.id}/panel-invites`, adminHeaders)).url).pathname;
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
  });

  /** The checks every page passes at every size: no sideways scroll, no raw code, the menu on screen, axe. */
  async function look(page: Page, where: string, size: keyof typeof SIZES): Promise<string> {
    where = `${where} (${size})`;
    assert.ok((await overflowOf(page)) <= 0, `${where}: the page is ${await overflowOf(page)} px wider than the window`);
    const shown = (await page.evaluate('document.body.innerText')) as string;
    assert.deepEqual(shown.match(raw_code) ?? [], [], `${where}: codes shown instead of words`);
    for (const link of await page.locator('header a, header button').all()) {
      const box = await link.boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= SIZES[size].width, `${where}: "${await link.textContent()}" is off screen`);
    }
    assert.deepEqual(await axeCheck(page), [], `${where}: axe`);
    return shown;
  }
  async function visit(page: Page, path: string, size: keyof typeof SIZES, status = 200): Promise<string> {
    const answer = await page.goto(`${base}${path}`);
    assert.equal(answer?.status(), status, `${path}: ${answer?.status()}`);
    return look(page, path, size);
  }
  const text = async (page: Page, selector: string) => ((await page.locator(selector).first().textContent()) ?? '').trim();
  /** The error shown beside an input: the input is marked invalid and described by it, nothing above the page instead. */
  async function errorBeside(page: Page, id: string): Promise<string> {
    const input = page.locator(`#${id}`);
    assert.equal(await input.getAttribute('aria-invalid'), 'true', `#${id} marked invalid`);
    assert.equal(await input.getAttribute('aria-describedby'), `${id}-erro`, `#${id} described by its error`);
    assert.equal(await page.locator('[role="alert"]').count(), 0, 'no error above the page instead');
    return text(page, `#${id}-erro`);
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

  for (const size of Object.keys(SIZES) as (keyof typeof SIZES)[]) {
    test(`at ${SIZES[size].width}×${SIZES[size].height} (${size}): contested, defended, won; another lost; the Extrato says both`, async () => {
      const page = await newPage(browser, { javaScriptEnabled: false, viewport: SIZES[size] });
      try {
        await logIn(page);
        const won = await paidPix(15000);
        const lost = await paidPix(8000);
        const blockedBefore = (await api('GET', '/api/public/balance', seller.headers)).blocked as number;
        const wonInfraction = await contest(won);
        await contested(page, size, won, blockedBefore);
        await defended(page, size, won);
        await decide(wonInfraction, 'REJEITADA');
        assert.equal((await sale(won)).status, 'PAGO');
        await released(page, size, won);
        const lostInfraction = await contest(lost);
        await refusedThenLost(page, size, lost, lostInfraction);
        await statement(page, size, won, lost);
      } finally {
        await page.close();
      }
    });
  }

  /** Início and Vendas say the sale is in MED; its page says why, since when, until when, what is blocked; the form is there. */
  async function contested(page: Page, size: keyof typeof SIZES, id: number, blockedBefore: number): Promise<void> {
    const read = await sale(id);
    assert.equal(read.status, 'MED');
    assert.equal(read.med.status, 'ABERTA');
    const row = `tbody tr:has(a[href="/painel/vendas/${id}"])`;
    await visit(page, '/painel', size);
    assert.match(await text(page, row), /Em contestação \(MED\)/, 'Início');
    await visit(page, '/painel/vendas?status=MED', size);
    assert.match(await text(page, row), /R\$ 150,00.*Em contestação \(MED\).*PIX/s, 'Vendas, filtered by the status');
    assert.equal(await page.locator('#status option:checked').textContent(), 'Em contestação (MED)');

    const shown = await visit(page, `/painel/vendas/${id}`, size);
    assert.equal(await text(page, '[data-venda="status"]'), 'Em contestação (MED)');
    assert.equal(await text(page, '#med'), 'Contestação (MED)');
    assert.equal(await text(page, '[data-med="status"]'), 'Aberta');
    assert.equal(await text(page, '[data-med="motivo"]'), read.med.reason ?? 'Motivo não informado pelo PSP');
    assert.ok(read.med.reason, 'the sandbox PSP gives a reason');
    assert.equal(await text(page, '[data-med="desde"]'), brasilia(read.med.openedAt));
    const deadline = `${brasilia(read.med.deadline)} (horário de Brasília)`;
    assert.equal(await text(page, '[data-med="prazo"]'), deadline);
    const blocked = (await api('GET', '/api/public/balance', seller.headers)).blocked - blockedBefore;
    assert.equal(blocked, read.netAmount, 'the net of the sale is blocked');
    assert.equal(await text(page, '[data-med="bloqueado"]'), brl(blocked));
    assert.match(shown, /Valor bloqueado/);

    const field = page.getByLabel('Justificativa da defesa');
    assert.equal(await field.getAttribute('minlength'), '10');
    assert.equal(await field.getAttribute('maxlength'), '2000');
    assert.equal(await field.getAttribute('aria-describedby'), 'justification-dica');
    const hint = await text(page, '#justification-dica');
    assert.ok(hint.includes(`Prazo para defesa: ${deadline}.`), hint);
    assert.match(hint, /de 10 a 2\.000 caracteres/);
    assert.equal(await page.locator(`form[action="/painel/vendas/${id}/med"] input[name="csrf"]`).count(), 1, 'the form carries its CSRF token');
    assert.equal(await page.getByRole('button', { name: 'Contestar MED' }).count(), 1);
  }

  /** A short justification is refused beside the field; a good one is sent once, even when its form is sent again. */
  async function defended(page: Page, size: keyof typeof SIZES, id: number): Promise<void> {
    // The browser holds back fewer than 10 characters (minlength); spaces count there, not for the PSP: the server says so.
    await page.getByLabel('Justificativa da defesa').fill('   Entregue.   ');
    const [short] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Contestar MED' }).click(),
    ]);
    assert.equal(short.status(), 400);
    assert.match(await errorBeside(page, 'justification'), /de 10 a 2\.000 caracteres; ela tem 9\./);
    assert.equal(await page.getByLabel('Justificativa da defesa').inputValue(), '   Entregue.   ', 'what was typed stays');
    await look(page, 'the short justification', size);
    assert.equal((await sale(id)).med.defense, null, 'nothing sent');

    // A tracking link with no place to break: it wraps inside the page all the same.
    const defence = `Produto entregue em 12/11/2026 no endereço do comprador, com assinatura.\nRastreio: https://rastreio.example/${'AB123456789BR'.repeat(8)}`;
    await page.getByLabel('Justificativa da defesa').fill(defence);
    const form = Object.fromEntries(
      await page
        .locator(`form[action="/painel/vendas/${id}/med"] :is(input, textarea)`)
        .evaluateAll((inputs) => inputs.map((i) => [(i as HTMLInputElement).name, (i as HTMLInputElement).value])),
    );
    await page.getByRole('button', { name: 'Contestar MED' }).click();
    await page.waitForURL(`${base}/painel/vendas/${id}?feito=defesa`);
    assert.equal(await text(page, '[role="status"]'), 'Defesa enviada ao PSP.');
    assert.equal(await page.locator('#justification').count(), 0, 'the form is gone');
    assert.equal(await text(page, '[data-med="status"]'), 'Em análise, defesa enviada');
    assert.equal(await text(page, '[data-med="defesa"]'), defence);
    const read = await sale(id);
    assert.equal(read.med.defense.status, 'SENT');
    assert.equal(read.med.defense.justification, defence);
    assert.equal(await text(page, '[data-med="defesa-status"]'), `Enviada em ${brasilia(read.med.defense.sentAt)}`);
    await look(page, 'the defence sent', size);

    // The same form again (a double click, a reload): done once, answered as done; a new form is refused in words.
    const again = await page.context().request.post(`${base}/painel/vendas/${id}/med`, { form, maxRedirects: 0 });
    assert.equal(again.status(), 303, 'the same order: answered as done');
    const other = await page
      .context()
      .request.post(`${base}/painel/vendas/${id}/med`, { form: { ...form, pedido: `outro-pedido-da-venda-${id}` }, maxRedirects: 0 });
    assert.equal(other.status(), 409);
    assert.match(await other.text(), /Esta contestação não aceita defesa agora/);
    assert.equal((await sale(id)).med.defense.sentAt, read.med.defense.sentAt, 'one defence');
  }

  /** Rejected: the sale is Pago again, nothing blocked, the defence still shown, no form. */
  async function released(page: Page, size: keyof typeof SIZES, id: number): Promise<void> {
    await visit(page, `/painel/vendas/${id}`, size);
    assert.equal(await text(page, '[data-venda="status"]'), 'Pago');
    assert.equal(await text(page, '[data-med="status"]'), 'Rejeitada: o valor foi liberado');
    assert.equal(await page.locator('[data-med="bloqueado"]').count(), 0, 'nothing blocked any more');
    assert.match(await text(page, '[data-med="defesa"]'), /^Produto entregue/);
    assert.equal(await page.locator('#justification').count(), 0);
    assert.match(await text(page, '.historico'), /Em contestação \(MED\) → Pago \(contestação \(MED\) ganha\)/);
  }

  /**
   * A defence the PSP refused (recorded as the gateway records the PSP's refusal: the embedded PSP's
   * refuseNextDefenses lever is not reachable through the gateway) is said, and the form is back;
   * then the infraction is accepted, the devolução made: Estornado (MED).
   */
  async function refusedThenLost(page: Page, size: keyof typeof SIZES, id: number, idInfracao: string): Promise<void> {
    await run(
      gw.ctx.db,
      sql`UPDATE med_infractions SET defense = 'Serviço prestado conforme contrato.', defense_state = 'REFUSED', defense_refusal = ${REFUSAL},
          defense_at = now() WHERE id_infracao = ${idInfracao}`,
    );
    await visit(page, `/painel/vendas/${id}?feito=defesa`, size);
    // A reason the gateway records itself (in the API's English) reads in Portuguese too.
    const overtaken = 'the infraction was decided before the PSP received the defence';
    await run(gw.ctx.db, sql`UPDATE med_infractions SET defense_refusal = ${overtaken} WHERE id_infracao = ${idInfracao}`);
    await page.goto(`${base}/painel/vendas/${id}`);
    assert.equal(await text(page, '[data-med="defesa-status"]'), 'Recusada pelo PSP: a contestação foi decidida antes de o PSP receber a defesa');
    await run(gw.ctx.db, sql`UPDATE med_infractions SET defense_refusal = ${REFUSAL} WHERE id_infracao = ${idInfracao}`);
    await page.goto(`${base}/painel/vendas/${id}?feito=defesa`);
    assert.equal(await text(page, '[role="alert"]'), `O PSP recusou a defesa: ${REFUSAL}`);
    assert.equal(await text(page, '[data-med="defesa-status"]'), `Recusada pelo PSP: ${REFUSAL}`);
    assert.equal(await page.locator('#justification').count(), 1, 'a refused defence may be sent again');

    await decide(idInfracao, 'ACEITA');
    await reaches(id, 'ESTORNADO');
    await visit(page, `/painel/vendas/${id}`, size);
    assert.equal(await text(page, '[data-venda="status"]'), 'Estornado (MED)');
    assert.equal(await text(page, '[data-med="status"]'), 'Aceita: o valor foi devolvido ao pagador');
    assert.equal(await page.locator('[data-med="bloqueado"]').count(), 0);
    assert.equal(await page.locator('#justification').count(), 0);
    await visit(page, '/painel/vendas', size);
    assert.match(await text(page, `tbody tr:has(a[href="/painel/vendas/${id}"])`), /Estornado \(MED\)/);
  }

  /** The Extrato: the block (out of available), its release (back), the loss (from the block: nothing more out of available). */
  async function statement(page: Page, size: keyof typeof SIZES, won: number, lost: number): Promise<void> {
    await visit(page, '/painel/extrato', size);
    const rows = await page.locator('table.extrato tbody tr').evaluateAll((trs) =>
      trs.map((tr) => ({
        text: (tr.querySelector('[data-extrato="lancamento"]')?.textContent ?? '').trim(),
        detail: (tr.querySelector('[data-extrato="detalhe"]')?.textContent ?? '').trim(),
        origin: (tr.querySelector('td.origem')?.textContent ?? '').trim(),
        amount: (tr.querySelector('[data-extrato="valor"]')?.textContent ?? '').trim(),
      })),
    );
    const of = (id: number) => rows.filter((r) => r.origin === `Venda #${id}` && r.text.startsWith('Contestação'));
    const net = { won: (await sale(won)).netAmount as number, lost: (await sale(lost)).netAmount as number };
    assert.deepEqual(
      of(won).map((r) => [r.text, r.amount]),
      [
        ['Contestação (MED) ganha: valor liberado', brl(net.won)],
        ['Contestação (MED) aberta: valor bloqueado', brl(-net.won)],
      ],
      'the block and its release (newest first)',
    );
    assert.equal(of(won)[0]!.detail, 'O valor bloqueado na contestação volta ao saldo disponível.');
    assert.equal(of(won)[1]!.detail, 'O banco do pagador contestou o PIX. Sai do disponível e fica bloqueado até a decisão.');
    assert.deepEqual(
      of(lost).map((r) => [r.text, r.amount]),
      [
        ['Contestação (MED) perdida: valor devolvido', '—'],
        ['Contestação (MED) aberta: valor bloqueado', brl(-net.lost)],
      ],
      'the block and the loss',
    );
    assert.equal(of(lost)[0]!.detail, 'R$ 80,00 devolvidos ao pagador, do valor bloqueado na contestação.');
  }
});
