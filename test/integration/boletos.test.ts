// Boletos registered through Efí (CONTRACT §11.4): the real `efi` connector against the embedded PSP
// over HTTP, the PSP notifying the gateway on its listening port. Every request the connector sends
// is checked with the zod schemas of Efí's official SDK; answers and notification histories with the
// SDK's answer schemas and the JSON Schema of spec/providers/efi-charges.schema.json.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import * as bu from '@brazilian-utils/brazilian-utils';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { hasError, parsePix } from 'pix-utils';
import {
  CancelChargeParamsSchema,
  CreateOneStepChargeBodySchema,
  CreateOneStepChargeResponseSchema,
  GetNotificationParamsSchema,
  GetNotificationResponseSchema,
  ListChargesParamsSchema,
  ListChargesResponseSchema,
} from 'sdk-node-apis-efi';
import * as vbr from 'validation-br';
import { run, sql } from '../../src/db/sql.ts';
import { ApiPixError } from '../../src/providers/api-pix/client/api-pix-client.ts';
import { boletoListQuery, type EfiChargesClient } from '../../src/providers/efi/charges-client.ts';
import { idOfEfiKey } from '../../src/providers/efi/keys.ts';
import { expiryJob } from '../../src/transactions/jobs.ts';
import { boletoExample } from '../helpers/fixtures.ts';
import { adminHeaders, type Gateway, railJob, type SellerKeys, startGateway } from '../helpers/gateway.ts';

const schema = JSON.parse(readFileSync('spec/providers/efi-charges.schema.json', 'utf8'));
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
const checkDocumented = ajv.compile(schema);
// biome-ignore lint/suspicious/noExplicitAny: a sale's answer, read as JSON
type SaleJson = Record<string, any>;

describe('boletos registered through Efí (the embedded PSP, over HTTP)', () => {
  let gw: Gateway;
  let now = new Date('2026-11-24T12:00:00Z');
  const charges: unknown[] = [];
  const cancels: unknown[] = [];
  const lists: { custom_id?: string; begin_date: string; end_date: string }[] = [];
  /** The next one-step charges whose answer is lost on its way back (made at the PSP all the same). */
  let loseAnswers = 0;
  const histories: unknown[] = [];

  before(async () => {
    gw = await startGateway({ clock: { now: () => now }, env: { PIX_RECONCILE_SECONDS: '30' } });
    const url = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    await gw.ctx.providers.listeningAt(url);
    // Every call the connector makes goes through this: requests checked by the SDK, raw answers by the SDK and our schema.
    const real = gw.ctx.rails.efiBoleto.charges;
    const psp = gw.ctx.rails.psp!;
    const raw = async (path: string) => {
      const token = await fetch(`${psp.efiUrl}/v1/authorize`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${psp.clientId}:${psp.clientSecret}`).toString('base64')}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ grant_type: 'client_credentials' }),
      }).then((r) => r.json() as Promise<{ access_token: string }>);
      return (await fetch(`${psp.efiUrl}${path}`, { headers: { authorization: `Bearer ${token.access_token}` } })).json();
    };
    const checked: EfiChargesClient = {
      async createOneStep(body) {
        charges.push(CreateOneStepChargeBodySchema.parse(body));
        const issued = await real.createOneStep(body);
        if (loseAnswers > 0 && loseAnswers--)
          throw new ApiPixError({ kind: 'network', operation: 'POST /v1/charge/one-step', reason: 'lost (test)' });
        return issued;
      },
      async boletosOf(customId, days) {
        // The query the client sends, as the SDK would send it.
        const query = boletoListQuery(customId, days);
        lists.push(ListChargesParamsSchema.parse(Object.fromEntries(query)));
        ListChargesResponseSchema.parse(await raw(`/v1/charges?${query}`));
        return real.boletosOf(customId, days);
      },
      async cancel(chargeId) {
        cancels.push(CancelChargeParamsSchema.parse({ id: chargeId }));
        return real.cancel(chargeId);
      },
      detail: (chargeId) => real.detail(chargeId),
      async notification(token) {
        GetNotificationParamsSchema.parse({ token });
        const answer = await raw(`/v1/notification/${token}`);
        if ((answer as { code?: number }).code === 200) {
          GetNotificationResponseSchema.parse(answer);
          assert.ok(checkDocumented(answer), JSON.stringify(checkDocumented.errors));
          histories.push(answer);
        }
        return real.notification(token);
      },
    };
    gw.ctx.rails.efiBoleto.charges = checked;
  });
  after(async () => {
    await gw?.close();
  });

  const psp = () => gw.ctx.rails.psp!;
  const job = () => railJob(gw, 'efi-boletos').run(gw.ctx);
  const later = (seconds: number) => {
    now = new Date(now.getTime() + seconds * 1000);
  };
  const sell = (seller: SellerKeys, body: object) => gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: body });
  const read = async (seller: SellerKeys, id: number) =>
    (await gw.app.inject({ method: 'GET', url: `/api/transactions/${id}`, headers: seller.headers })).json();
  const pay = (id: number, payload: object = {}) =>
    gw.app.inject({ method: 'POST', url: `/sandbox/boletos/${id}/pay`, headers: adminHeaders, payload });
  const chargeOf = async (id: number) =>
    (
      await run<{ status: string; charge_id: number }>(
        gw.ctx.db,
        sql`SELECT c.status, c.charge_id::float8 AS charge_id FROM sandbox_psp.charges c
      JOIN transactions t ON t.external_transaction_id = c.charge_id::text WHERE t.id = ${id}`,
      )
    ).rows[0]!;
  const postbacks = async (id: number, status: string) =>
    (await run<{ n: number }>(gw.ctx.db, sql`SELECT count(*)::int AS n FROM notifications WHERE transaction_id = ${id} AND event_status = ${status}`))
      .rows[0]!.n;

  async function newBoleto(seller: SellerKeys, body: object = boletoExample({ dueDate: '2026-12-10' })): Promise<{ id: number; sale: SaleJson }> {
    const res = await sell(seller, { ...body, postbackUrl: 'https://seller.example/postback' });
    assert.equal(res.statusCode, 201, res.body);
    return { id: res.json().sale.id, sale: res.json().sale };
  }

  test('a boleto sale: a code three validators accept, a Pix BR Code that decodes, the PDF; the request is what the SDK accepts', async () => {
    const seller = await gw.createSeller();
    const { id, sale } = await newBoleto(seller);
    const boleto = sale.payment.boleto;
    assert.equal(bu.isValidBoleto(boleto.code), true, boleto.code);
    assert.equal(vbr.isBoleto(boleto.code), true, boleto.code);
    const info = bu.getBoletoInfo(boleto.code, { referenceDate: new Date('2026-12-10T12:00:00Z') });
    assert.equal(info?.amount, Number(sale.amount), 'the amount in the code is the sale’s (cents)');
    assert.equal(boleto.barcode.slice(0, 3), '001', 'the PSP’s bank code (BOLETO_BANK_CODE)');
    const pix = parsePix(boleto.pix.key);
    assert.ok(!hasError(pix), boleto.pix.key);
    assert.match(boleto.pix.qrCodeBase64, /^data:image\/png;base64,/);
    const pdf = await fetch(boleto.pdfUrl);
    assert.equal(pdf.headers.get('content-type'), 'application/pdf');
    assert.equal(
      Buffer.from(await pdf.arrayBuffer())
        .subarray(0, 5)
        .toString(),
      '%PDF-',
    );
    const sent = charges.at(-1) as { metadata: { custom_id: string; notification_url: string }; payment: { banking_billet: { expire_at: string } } };
    assert.equal(sent.metadata.custom_id, `${gw.ctx.installationId}${id}`);
    assert.match(sent.metadata.notification_url, /\/providers\/efi\/charges\/[A-Za-z0-9_-]{32,}$/);
    assert.equal(sent.payment.banking_billet.expire_at, '2026-12-10');
    const t = await read(seller, id);
    assert.equal(t.status, 'PENDENTE');
    assert.equal(t.boletoCode, boleto.code);
    assert.equal(t.boletoPdfUrl, boleto.pdfUrl);
    assert.equal(t.boletoPixKey, boleto.pix.key);
    assert.equal(t.externalTransactionId, String((await chargeOf(id)).charge_id));
    // The documented answer of a one-step charge, as Efí's SDK and our schema read it.
    const psp0 = psp();
    const token = await fetch(`${psp0.efiUrl}/v1/authorize`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${psp0.clientId}:${psp0.clientSecret}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ grant_type: 'client_credentials' }),
    }).then((r) => r.json() as Promise<{ access_token: string }>);
    const created = await fetch(`${psp0.efiUrl}/v1/charge/one-step`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...charges.at(-1)!, metadata: {} }),
    }).then((r) => r.json());
    CreateOneStepChargeResponseSchema.parse(created);
    assert.ok(checkDocumented(created), JSON.stringify(checkDocumented.errors));
  });

  test('paid by the bank: PAGO once, notified once; the notification history is what the SDK accepts', async () => {
    const seller = await gw.createSeller();
    const { id } = await newBoleto(seller);
    const paid = await pay(id);
    assert.equal(paid.statusCode, 200, paid.body);
    assert.equal(paid.json().status, 'PAGO');
    assert.equal((await read(seller, id)).status, 'PAGO');
    assert.equal((await pay(id)).statusCode, 409, 'paid already');
    assert.ok(histories.length > 0);
    // Reading it back later repeats nothing.
    later(3600);
    await job();
    assert.equal(await postbacks(id, 'PAGO'), 1);
  });

  test('paid by its Pix (boleto híbrido): PAGO', async () => {
    const seller = await gw.createSeller();
    const { id, sale } = await newBoleto(seller);
    const txid = `bolix${String((await chargeOf(id)).charge_id).padStart(25, '0')}`;
    await psp().pay(txid, Number(sale.amount));
    assert.equal((await read(seller, id)).status, 'PAGO');
    assert.equal((await chargeOf(id)).status, 'paid');
  });

  test('a dropped notification: PAGO by reconciliation', async () => {
    const seller = await gw.createSeller();
    const { id } = await newBoleto(seller);
    psp().setCallbacks('drop');
    try {
      const paid = await pay(id);
      assert.equal(paid.statusCode, 200, paid.body);
      assert.equal(paid.json().status, 'PENDENTE');
    } finally {
      psp().setCallbacks('deliver');
    }
    await job();
    assert.equal((await read(seller, id)).status, 'PENDENTE', 'not read back before its first check');
    later(10 * 60);
    await job();
    assert.equal((await read(seller, id)).status, 'PAGO');
    assert.equal(await postbacks(id, 'PAGO'), 1);
  });

  test('a cancelled sale cancels the charge at the PSP; a payment after it needs the operator and moves nothing', async () => {
    const seller = await gw.createSeller();
    const { id } = await newBoleto(seller);
    const cancelled = await gw.app.inject({ method: 'POST', url: `/api/transactions/${id}/cancel`, headers: seller.headers });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    await job();
    assert.equal((await chargeOf(id)).status, 'canceled');
    assert.ok(cancels.length > 0);
    // By the sale's id, as a tester pays any sale: the same bank payment.
    const paid = await gw.app.inject({ method: 'POST', url: `/sandbox/sales/${id}/pay`, headers: adminHeaders, payload: {} });
    assert.equal(paid.statusCode, 200, paid.body);
    assert.equal(paid.json().status, 'CANCELADO');
    const events = await gw.app.inject({ method: 'GET', url: '/admin/provider-events?state=needs_operator&provider=efi', headers: adminHeaders });
    const mine = events.json().data.filter((e: { transactionId: number }) => e.transactionId === id);
    assert.equal(mine.length, 1, events.body);
    assert.equal(mine[0].kind, 'BOLETO_STATUS');
    assert.match(mine[0].reason, /returned/);
    const balance = (await gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: seller.headers })).json();
    assert.deepEqual(balance, { available: 0, blocked: 0, total: 0 });
  });

  test('Efí refusing the charge: 502 PROVIDER_ERROR, no sale written', async () => {
    const seller = await gw.createSeller();
    psp().refuseNextCharges(1);
    const res = await sell(seller, boletoExample({ dueDate: '2026-12-10' }));
    assert.equal(res.statusCode, 502, res.body);
    assert.equal(res.json().errorType, 'PROVIDER_ERROR');
    const count = await run<{ n: number }>(gw.ctx.db, sql`SELECT count(*)::int AS n FROM transactions WHERE seller_id = ${seller.id}`);
    assert.equal(count.rows[0]!.n, 0);
  });

  test('a boleto whose answer was lost: the retry of its key and body finds it at Efí by its reference, not a second; one no longer payable sells nothing', async () => {
    const seller = await gw.createSeller();
    const keyed = (key: string, body: object) =>
      gw.app.inject({ method: 'POST', url: '/api/sales', headers: { ...seller.headers, 'idempotency-key': key }, payload: body });
    const ofCustomId = async (customId: string) =>
      (await run<{ n: number }>(gw.ctx.db, sql`SELECT count(*)::int AS n FROM sandbox_psp.charges WHERE custom_id = ${customId}`)).rows[0]!.n;
    const sentId = () => (charges.at(-1) as { metadata: { custom_id: string } }).metadata.custom_id;

    const body = boletoExample({ dueDate: '2026-12-10' });
    const listed = lists.length;
    loseAnswers = 1;
    const first = await keyed('boleto-lost', body);
    assert.equal(first.statusCode, 502, first.body);
    const customId = sentId();
    assert.match(customId, new RegExp(`^${gw.ctx.installationId}[1-9]\\d{14}$`), "the key's reference as 15 digits, after the installation's id");
    assert.notEqual(idOfEfiKey(gw.ctx.installationId, customId), null, 'read as ours by every release');
    assert.equal(lists.length, listed, 'a reference drawn now asks nothing first');
    const made = charges.length;
    const retry = await keyed('boleto-lost', body);
    assert.equal(retry.statusCode, 201, retry.body);
    assert.equal(charges.length, made, 'nothing registered again');
    assert.equal(lists.length, listed + 1);
    assert.equal(lists.at(-1)!.custom_id, customId);
    assert.equal(await ofCustomId(customId), 1, 'one boleto at Efí');
    const sale = retry.json().sale;
    const charge = await chargeOf(sale.id);
    assert.equal(charge.status, 'waiting');
    assert.equal(sale.payment.boleto.code.replace(/\D/g, '').length, 47);
    assert.ok(bu.isValidBoleto(sale.payment.boleto.code));
    assert.equal((await pay(sale.id)).statusCode, 200);
    assert.equal((await read(seller, sale.id)).status, 'PAGO', 'its payment finds the sale');

    // Found again but cancelled meanwhile: no sale; the reference drawn after the 30 s gets a boleto of its own.
    loseAnswers = 1;
    assert.equal((await keyed('boleto-cancelled', body)).statusCode, 502);
    const cancelledId = sentId();
    const [{ charge_id }] = (
      await run<{ charge_id: number }>(
        gw.ctx.db,
        sql`SELECT charge_id::float8 AS charge_id FROM sandbox_psp.charges WHERE custom_id = ${cancelledId}`,
      )
    ).rows as [{ charge_id: number }];
    await gw.ctx.rails.efiBoleto.charges.cancel(charge_id);
    const refused = await keyed('boleto-cancelled', body);
    assert.equal(refused.statusCode, 502, refused.body);
    assert.match(refused.json().message, /canceled/);
    await run(
      gw.ctx.db,
      sql`UPDATE idempotency_claims SET reference_at = reference_at - interval '31 seconds' WHERE seller_id = ${seller.id} AND key = 'boleto-cancelled'`,
    );
    const late = await keyed('boleto-cancelled', body);
    assert.equal(late.statusCode, 201, late.body);
    assert.notEqual(sentId(), cancelledId);

    // Across São Paulo's midnight the boleto made the day before is found; one whose default due date
    // counted from the day before is not this request's, and the retry registers its own.
    const saved = now;
    const acrossMidnight = async (key: string, sale: object) => {
      now = new Date('2026-11-25T02:59:50Z'); // 23:59:50 in São Paulo
      loseAnswers = 1;
      assert.equal((await keyed(key, sale)).statusCode, 502);
      const id = sentId();
      now = new Date('2026-11-25T03:00:10Z');
      const res = await keyed(key, sale);
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(lists.at(-1)!.custom_id, id);
      assert.deepEqual([lists.at(-1)!.begin_date, lists.at(-1)!.end_date], ['2026-11-24', '2026-11-25']);
      return { id, sale: res.json().sale };
    };
    try {
      const dated = await acrossMidnight('boleto-midnight', body);
      assert.equal(await ofCustomId(dated.id), 1, 'found: one boleto');
      const undated = await acrossMidnight('boleto-midnight-undated', boletoExample());
      assert.equal(await ofCustomId(undated.id), 2, 'due a day apart: its own boleto');
      assert.equal(
        undated.sale.payment.boleto.dueDate,
        (charges.at(-1) as { payment: { banking_billet: { expire_at: string } } }).payment.banking_billet.expire_at,
      );
    } finally {
      now = saved;
    }
  });

  test('a forged notification token moves nothing; a wrong secret is 404', async () => {
    const seller = await gw.createSeller();
    const { id } = await newBoleto(seller);
    const secret = gw.config.boletoRail.webhookSecret;
    const forged = await gw.app.inject({
      method: 'POST',
      url: `/providers/efi/charges/${secret}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `notification=${'f'.repeat(32)}`,
    });
    assert.equal(forged.statusCode, 200, forged.body);
    assert.equal((await read(seller, id)).status, 'PENDENTE');
    const wrong = await gw.app.inject({
      method: 'POST',
      url: `/providers/efi/charges/${'x'.repeat(43)}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'notification=abc',
    });
    assert.equal(wrong.statusCode, 404);
    const bad = await gw.app.inject({
      method: 'POST',
      url: `/providers/efi/charges/${secret}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'other=1',
    });
    assert.equal(bad.statusCode, 400, bad.body);
  });

  test('expiry (due date + 3 days) cancels the sale and its charge at the PSP', async () => {
    const seller = await gw.createSeller();
    const { id } = await newBoleto(seller, boletoExample({ dueDate: '2026-11-25' }));
    now = new Date('2026-11-29T12:00:00Z');
    await expiryJob.run(gw.ctx);
    assert.equal((await read(seller, id)).status, 'CANCELADO');
    await job();
    assert.equal((await chargeOf(id)).status, 'canceled');
  });
});
