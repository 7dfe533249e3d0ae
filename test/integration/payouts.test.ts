// Cashouts paid by a PSP (CONTRACT §11.3): the real `efi` connector against the embedded PSP over
// HTTP, the PSP calling the gateway back on its listening port. Every request the connector sends
// is checked with the zod schemas of Efí's official SDK; answers and callbacks with the JSON Schema
// of spec/providers/efi-pix-send.schema.json.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { PixConfigWebhookBodySchema, PixSendBodySchema, PixSendParamsSchema } from 'sdk-node-apis-efi';
import { run, sql } from '../../src/db/sql.ts';
import type { EfiPixSendClient } from '../../src/providers/efi/pix-send-client.ts';
import { fund } from '../helpers/funding.ts';
import { adminHeaders, type Gateway, railJob, type SellerKeys, startGateway } from '../helpers/gateway.ts';

const reconcile_s = 30;
const schema = JSON.parse(readFileSync('spec/providers/efi-pix-send.schema.json', 'utf8'));
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
const checkAnswer = ajv.compile(schema);

describe('payouts through Efí (the embedded PSP, over HTTP)', () => {
  let gw: Gateway;
  let now = new Date('2026-11-24T12:00:00Z');
  const sent: { params: unknown; body: unknown }[] = [];
  const webhooks: unknown[] = [];

  before(async () => {
    gw = await startGateway({ clock: { now: () => now }, env: { PIX_RECONCILE_SECONDS: String(reconcile_s) } });
    const url = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    gw.ctx.providers.listeningAt(url);
    // Every call the connector makes goes through this: requests checked by the SDK, answers by our schema.
    const real = gw.ctx.rails.efi.client;
    const checked: EfiPixSendClient = {
      async sendPix(idEnvio, body) {
        sent.push({ params: PixSendParamsSchema.parse({ idEnvio }), body: PixSendBodySchema.parse(body) });
        return real.sendPix(idEnvio, body);
      },
      async getSent(idEnvio) {
        PixSendParamsSchema.parse({ idEnvio });
        return real.getSent(idEnvio);
      },
      async putWebhook(chave, webhookUrl) {
        webhooks.push(PixConfigWebhookBodySchema.parse({ webhookUrl }));
        return real.putWebhook(chave, webhookUrl);
      },
    };
    gw.ctx.rails.efi.client = checked;
  });
  after(async () => {
    await gw?.close();
  });

  const psp = () => gw.ctx.rails.psp!;
  const job = () => railJob(gw, 'efi-payouts').run(gw.ctx);
  const later = (seconds: number) => {
    now = new Date(now.getTime() + seconds * 1000);
  };
  const cashout = (seller: SellerKeys, body: object) =>
    gw.app.inject({ method: 'POST', url: '/api/public/cashout', headers: seller.headers, payload: body });
  const read = async (seller: SellerKeys, id: number) =>
    (await gw.app.inject({ method: 'GET', url: `/api/public/cashout/${id}`, headers: seller.headers })).json();
  const balance = async (seller: SellerKeys) => (await gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: seller.headers })).json();
  const sentRows = async (id: number) =>
    (
      await run<{ id_envio: string; valor_cents: number }>(
        gw.ctx.db,
        sql`SELECT id_envio, valor_cents FROM sandbox_psp_sent WHERE info_pagador = ${`Saque ${id}`}`,
      )
    ).rows;
  const verifyLedger = async () =>
    assert.equal((await gw.app.inject({ method: 'GET', url: '/admin/ledger/verify', headers: adminHeaders })).json().ok, true);

  async function fundedSeller(cents = 100_000_00): Promise<SellerKeys> {
    const seller = await gw.createSeller();
    await fund(gw, seller.id, cents);
    return seller;
  }
  async function newCashout(seller: SellerKeys, body: object = { amount: 150, pixKey: '52998224725', pixKeyType: 'CPF' }): Promise<number> {
    const res = await cashout(seller, body);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().status, 'PENDING');
    return res.json().id;
  }

  test('sent, PROCESSING on the 201, COMPLETED by the callback; the body is what the SDK accepts', async () => {
    const seller = await fundedSeller();
    const id = await newCashout(seller);
    assert.equal(await job(), 1);
    assert.equal((await read(seller, id)).status, 'PROCESSING');
    assert.ok(webhooks.length >= 1, 'the paying key webhook was registered');
    const last = sent.at(-1)!.body as { valor: string; favorecido: { chave: string; cpf?: string }; pagador: { infoPagador: string } };
    const view = await read(seller, id);
    assert.equal(last.valor, view.netAmount, 'the net amount is sent');
    assert.deepEqual(last.favorecido, { chave: '52998224725', cpf: '52998224725' });
    await psp().settleSends(); // REALIZADO, then the callback
    const done = await read(seller, id);
    assert.equal(done.status, 'COMPLETED');
    assert.equal(done.failureReason, null);
    assert.equal(done.returnedAmount, '0.00');
    assert.equal((await balance(seller)).blocked, 0);
    assert.equal((await sentRows(id)).length, 1);
    await verifyLedger();
  });

  test('a refusal in the request → REJECTED with its reason, the balance restored', async () => {
    for (const [status, nome] of [
      [400, 'chave_invalida'],
      [404, 'chave_nao_encontrada'],
      [422, 'pagamento_negado'],
      [400, 'chave_nao_pertence_ao_documento'],
    ] as const) {
      const seller = await fundedSeller(50_000);
      const id = await newCashout(seller);
      psp().failNextSends(1, { status, nome });
      await job();
      const view = await read(seller, id);
      assert.equal(view.status, 'REJECTED', `${status} ${nome}`);
      assert.match(view.failureReason, new RegExp(nome));
      assert.deepEqual(await balance(seller), { available: 50_000, blocked: 0, total: 50_000 });
      assert.equal((await sentRows(id)).length, 0);
    }
    await verifyLedger();
  });

  test('the sandbox rule: an @reject.test key is taken, then NAO_REALIZADO → REJECTED, money back', async () => {
    const seller = await fundedSeller(50_000);
    const id = await newCashout(seller, { amount: 150, pixKey: 'loja@reject.test', pixKeyType: 'EMAIL' });
    await job();
    assert.equal((await read(seller, id)).status, 'PROCESSING');
    await psp().settleSends();
    const view = await read(seller, id);
    assert.equal(view.status, 'REJECTED');
    assert.match(view.failureReason, /reject\.test/);
    assert.equal((await balance(seller)).available, 50_000);
  });

  test('429 and 5xx leave it PENDING; the next round sends it again with the same idEnvio (Retry-After when longer)', async () => {
    const seller = await fundedSeller();
    const id = await newCashout(seller);
    psp().failNextSends(1, { status: 500 });
    await job();
    assert.equal((await read(seller, id)).status, 'PENDING');
    psp().failNextSends(1, { status: 429, nome: 'limite_excedido', retryAfterSeconds: reconcile_s * 3 });
    later(reconcile_s);
    await job();
    assert.equal((await read(seller, id)).status, 'PENDING');
    later(reconcile_s);
    assert.equal(await job(), 0, 'Retry-After longer than the interval is waited out');
    later(reconcile_s * 2);
    await job();
    assert.equal((await read(seller, id)).status, 'PROCESSING');
    const ids = new Set(
      sent
        .filter((s) => (s.body as { pagador: { infoPagador: string } }).pagador.infoPagador === `Saque ${id}`)
        .map((s) => (s.params as { idEnvio: string }).idEnvio),
    );
    assert.equal(ids.size, 1, 'every attempt with one idEnvio');
    assert.equal((await sentRows(id)).length, 1);
  });

  test('a lost answer (reset, hang) then a retry makes one Pix: the 409 is read back', async () => {
    for (const how of ['reset', 'hang'] as const) {
      const seller = await fundedSeller();
      const id = await newCashout(seller);
      psp().loseNextSendAnswers(1, how);
      // Its callback lost too (a hang outlives the settlement): only the retry can learn the outcome.
      psp().setCallbacks('drop');
      try {
        await job();
      } finally {
        psp().setCallbacks('deliver');
      }
      assert.equal((await read(seller, id)).status, 'PENDING', how);
      assert.equal((await sentRows(id)).length, 1, `${how}: the PSP has it`);
      later(reconcile_s);
      await job();
      assert.notEqual((await read(seller, id)).status, 'PENDING', how);
      await psp().settleSends();
      assert.equal((await read(seller, id)).status, 'COMPLETED', how);
      assert.equal((await sentRows(id)).length, 1, `${how}: one Pix`);
    }
    await verifyLedger();
  });

  test('a dropped callback ends COMPLETED by reconciliation within PIX_RECONCILE_SECONDS', async () => {
    const seller = await fundedSeller();
    const id = await newCashout(seller);
    await job();
    psp().setCallbacks('drop');
    try {
      await psp().settleSends();
    } finally {
      psp().setCallbacks('deliver');
    }
    assert.equal((await read(seller, id)).status, 'PROCESSING');
    later(reconcile_s);
    await job();
    assert.equal((await read(seller, id)).status, 'COMPLETED');
  });

  test('a returned Pix credits the seller once; the cashout stays COMPLETED', async () => {
    const seller = await fundedSeller(50_000);
    const id = await newCashout(seller);
    await job();
    await psp().settleSends();
    const idEnvio = (sent.at(-1)!.params as { idEnvio: string }).idEnvio;
    const before = (await balance(seller)).available;
    await psp().returnSent(idEnvio, 5_000);
    const view = await read(seller, id);
    assert.equal(view.status, 'COMPLETED');
    assert.equal(view.returnedAmount, '50.00');
    assert.equal((await balance(seller)).available, before + 5_000);
    // Reconciliation reads it again: nothing twice.
    later(3600 * 2);
    await job();
    assert.equal((await balance(seller)).available, before + 5_000);
    assert.ok(checkAnswer(await pspViewRaw(idEnvio)), JSON.stringify(checkAnswer.errors));
    await verifyLedger();
  });

  test('a forged callback (right secret, made-up idEnvio) moves nothing', async () => {
    const seller = await fundedSeller();
    const id = await newCashout(seller);
    const installation = gw.ctx.rails.efi.installationId;
    const secret = gw.config.pixRail.webhookSecret;
    const forged = {
      pix: [
        {
          endToEndId: `E12345678${'2'.repeat(12)}abcdefghijk`,
          status: 'REALIZADO',
          tipo: 'SOLICITACAO',
          valor: '148.00',
          horario: now.toISOString(),
          gnExtras: { idEnvio: `${installation}${id}` },
        },
      ],
    };
    assert.ok(checkAnswer(forged), JSON.stringify(checkAnswer.errors));
    const res = await gw.app.inject({ method: 'POST', url: `/providers/pix/${secret}/pix`, payload: forged });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await read(seller, id)).status, 'PENDING', 'Efí has no such sent Pix: nothing moves');
    const other = { pix: [{ ...forged.pix[0], gnExtras: { idEnvio: 'someoneelse123456' } }] };
    assert.equal((await gw.app.inject({ method: 'POST', url: `/providers/pix/${secret}/pix`, payload: other })).statusCode, 200);
    const events = await run<{ n: number }>(gw.ctx.db, sql`SELECT count(*)::int AS n FROM provider_events WHERE cashout_id = ${id}`);
    assert.equal(events.rows[0]!.n, 0);
  });

  async function pspViewRaw(idEnvio: string): Promise<unknown> {
    const token = await fetch(psp().tokenUrl, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${psp().clientId}:${psp().clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    }).then((r) => r.json() as Promise<{ access_token: string }>);
    const res = await fetch(`${psp().efiUrl}/v2/gn/pix/enviados/id-envio/${idEnvio}`, { headers: { authorization: `Bearer ${token.access_token}` } });
    return res.json();
  }
});
